package helm

import (
	"context"
	"testing"

	"github.com/kubegitops/gitops/internal/godeps"
)

// TestRendererDoesNotImportHelmAction guards the renderer's import cost:
// Helm's pkg/action (a release storage with an SQL driver, sql-migrate,
// gorp and kubectl) cost every host hundreds of packages for what the
// engine, chartutil and releaseutil render alike.
func TestRendererDoesNotImportHelmAction(t *testing.T) {
	deps, err := godeps.List(context.Background(), "github.com/kubegitops/gitops/render/helm")
	if err != nil {
		t.Fatal(err)
	}
	engine := false
	for _, d := range deps {
		switch d {
		case "helm.sh/helm/v3/pkg/action", "database/sql", "helm.sh/helm/v3/pkg/storage/driver":
			t.Errorf("render/helm imports %s", d)
		case "helm.sh/helm/v3/pkg/engine":
			engine = true
		}
	}
	if !engine {
		t.Error("render/helm does not import helm.sh/helm/v3/pkg/engine: the guard no longer checks what renders")
	}
	t.Logf("go list -deps render/helm: %d packages", len(deps))
}
