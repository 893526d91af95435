package helmindex_test

import (
	"context"
	"testing"

	"github.com/kubegitops/gitops/internal/godeps"
)

// heavyHelmClients are Helm's client packages that the chart sources and
// the renderer must not import: pkg/repo alone cost 854 packages through
// pkg/getter, pkg/cli and kubectl, for an index parser and a URL join
// (now this package).
var heavyHelmClients = []string{
	"helm.sh/helm/v3/pkg/repo",
	"helm.sh/helm/v3/pkg/getter",
	"helm.sh/helm/v3/pkg/cli",
}

// TestChartSourcesDoNotImportHelmClients guards the import cost of
// source/helmrepo and render/helm.
func TestChartSourcesDoNotImportHelmClients(t *testing.T) {
	for _, pkg := range []string{"github.com/kubegitops/gitops/source/helmrepo", "github.com/kubegitops/gitops/render/helm"} {
		deps, err := godeps.List(context.Background(), pkg)
		if err != nil {
			t.Fatal(err)
		}
		index := false
		for _, d := range deps {
			for _, heavy := range heavyHelmClients {
				if d == heavy {
					t.Errorf("%s imports %s", pkg, d)
				}
			}
			index = index || d == "github.com/kubegitops/gitops/internal/helmindex"
		}
		if !index {
			t.Errorf("%s does not import internal/helmindex: the guard no longer checks where indexes are read", pkg)
		}
		t.Logf("go list -deps %s: %d packages", pkg, len(deps))
	}
}
