package argodocs_test

import (
	"strings"
	"testing"

	"github.com/kubegitops/gitops/internal/argodocs"
)

func TestReadsTheReleasesDocs(t *testing.T) {
	r := argodocs.ForTest(t)
	if r.Version() != argodocs.Version {
		t.Fatalf("version %q, want %q", r.Version(), argodocs.Version)
	}
	b := r.MustReadFile(t, "docs/operator-manual/project.yaml")
	if !strings.Contains(string(b), "kind: AppProject") {
		t.Fatalf("project.yaml is not an AppProject:\n%s", b)
	}
	names, err := r.Glob("docs/operator-manual/argocd-*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 8 {
		t.Fatalf("only %d argocd-*.yaml files: %v", len(names), names)
	}
	if _, err := r.ReadFile("docs/no-such-file.yaml"); err == nil || !strings.Contains(err.Error(), "docs/no-such-file.yaml") {
		t.Fatalf("a missing file's error %v does not name it", err)
	}
}
