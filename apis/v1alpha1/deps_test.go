package v1alpha1

import (
	"context"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/internal/godeps"
)

// forbiddenDeps are module paths the model must never reach: the engine's
// heavy dependencies, which a host importing only the types should not pay
// for.
var forbiddenDeps = []string{
	"helm.sh/helm",                   // Helm
	"sigs.k8s.io/kustomize",          // Kustomize
	"github.com/go-git",              // go-git
	"github.com/yuin/gopher-lua",     // Lua
	"cel.dev/",                       // CEL
	"github.com/redis/go-redis",      // Redis
	"github.com/google/go-jsonnet",   // Jsonnet
	"sigs.k8s.io/controller-runtime", // controller-runtime
	"k8s.io/client-go",               // client-go, its typed and dynamic clients included
}

// ownAllowed are the packages of this module the model may import.
var ownAllowed = map[string]bool{
	"github.com/kubegitops/gitops/apis/v1alpha1":       true,
	"github.com/kubegitops/gitops/internal/strictload": true,
	"github.com/kubegitops/gitops/resource":            true,
}

func goListDeps(t *testing.T, pkg string) []string {
	t.Helper()
	deps, err := godeps.List(context.Background(), pkg)
	if err != nil {
		t.Fatal(err)
	}
	return deps
}

// TestModelDependencies fails when importing the model would pull in the
// engine's dependencies (Helm, Kustomize, go-git, Lua, CEL, Redis,
// Jsonnet, controller-runtime, client-go) or any engine package.
func TestModelDependencies(t *testing.T) {
	deps := goListDeps(t, "github.com/kubegitops/gitops/apis/v1alpha1")
	for _, d := range deps {
		for _, f := range forbiddenDeps {
			if strings.HasPrefix(d, f) {
				t.Errorf("the model reaches %s (forbidden: %s)", d, f)
			}
		}
		if strings.HasPrefix(d, "github.com/kubegitops/gitops") && !ownAllowed[d] {
			t.Errorf("the model imports engine package %s", d)
		}
	}
	root := goListDeps(t, "github.com/kubegitops/gitops")
	// The prefixes are spelled right: the engine does reach each of them
	// (controller-runtime only through the operator example, Redis only
	// through cache/store/redisstore, which a host plugs in).
	for _, f := range forbiddenDeps {
		if f == "sigs.k8s.io/controller-runtime" || f == "github.com/redis/go-redis" {
			continue
		}
		found := false
		for _, d := range root {
			found = found || strings.HasPrefix(d, f)
		}
		if !found {
			t.Errorf("forbidden prefix %s matches nothing the engine imports: misspelled?", f)
		}
	}
	t.Logf("go list -deps: apis/v1alpha1 %d packages, the root package %d", len(deps), len(root))
	if len(deps)*3 > len(root) {
		t.Errorf("the model costs %d packages, more than a third of the root's %d", len(deps), len(root))
	}
}
