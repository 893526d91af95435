package rbac

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBelowTheEngine: the package imports neither the engine (the root
// package) nor any add-on or example, nor client-go; only the model of
// this module.
func TestBelowTheEngine(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	own := map[string]bool{
		"github.com/kubegitops/gitops/rbac":                true,
		"github.com/kubegitops/gitops/apis/v1alpha1":       true,
		"github.com/kubegitops/gitops/internal/strictload": true,
		"github.com/kubegitops/gitops/resource":            true,
	}
	for _, d := range strings.Fields(string(out)) {
		if strings.HasPrefix(d, "github.com/kubegitops/gitops") && !own[d] {
			t.Errorf("rbac reaches %s", d)
		}
		if strings.HasPrefix(d, "k8s.io/client-go") {
			t.Errorf("rbac reaches %s", d)
		}
	}
}
