package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/internal/godeps"
)

// The README shows this program whole; the two must not drift apart, and
// it must stay under 40 lines.
func TestREADMEShowsThisProgram(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```go\n"+string(src)+"```") {
		t.Fatal("README.md's Embedding section does not hold examples/minimal/main.go as it is")
	}
	if n := strings.Count(string(src), "\n"); n >= 40 {
		t.Fatalf("main.go has %d lines; the minimal host must stay under 40", n)
	}
}

// The minimal host builds on the lean core alone: neither the root package
// nor the Helm or Kustomize renderer, so that its binary stays small (52 MB
// against 128 MB through the root; BENCHMARKS.md).
func TestBuildsOnTheLeanCore(t *testing.T) {
	deps, err := godeps.List(context.Background(), "github.com/kubegitops/gitops/examples/minimal")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range deps {
		switch {
		case d == "github.com/kubegitops/gitops", d == "github.com/kubegitops/gitops/render/builtin",
			d == "github.com/kubegitops/gitops/render/helm", d == "github.com/kubegitops/gitops/render/kustomize",
			strings.HasPrefix(d, "helm.sh/"), strings.HasPrefix(d, "sigs.k8s.io/kustomize/"):
			t.Errorf("the minimal host imports %s; it builds on package engine alone", d)
		}
	}
}
