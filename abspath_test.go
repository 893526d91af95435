package gitops

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/render"
)

// TestAbsoluteAppPathIsRefused: Argo CD refuses an absolute app path; it
// must not be read from the repository root. The loader names the field,
// and an app built in Go gets the typed path error from Refresh.
func TestAbsoluteAppPathIsRefused(t *testing.T) {
	t.Parallel()
	_, err := LoadApplications(strings.NewReader(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: abs}
spec:
  source: {repoURL: https://example.com/r.git, path: /traversal}
  destination: {server: https://kubernetes.default.svc, namespace: default}
`))
	if err == nil || !strings.Contains(err.Error(), "spec.source.path") || !strings.Contains(err.Error(), "absolute") {
		t.Fatalf("load: got %v, want an error naming spec.source.path", err)
	}

	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{"traversal/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"})
	e := newEngine(t, nil)
	app := dirApp(ns, dir, ns)
	app.Spec.Source.Path = "/traversal"
	st, err := e.Refresh(context.Background(), app)
	var pe *render.PathError
	if !errors.As(err, &pe) || !errors.Is(err, render.ErrAbsolutePath) || pe.Path != "/traversal" {
		t.Fatalf("refresh: got %v, want a render.PathError for /traversal wrapping ErrAbsolutePath", err)
	}
	if st.Sync != Unknown || len(st.Resources) != 0 {
		t.Fatalf("status %+v: an absolute path rendered something", st)
	}
	if _, err := e.Sync(context.Background(), app, SyncRequest{}); !errors.Is(err, render.ErrAbsolutePath) {
		t.Fatalf("sync: got %v, want ErrAbsolutePath", err)
	}
	// A relative path with a trailing slash still works.
	app.Spec.Source.Path = "traversal/"
	if st, err := e.Refresh(context.Background(), app); err != nil || len(st.Resources) != 1 {
		t.Fatalf("relative path: %+v, %v", st, err)
	}
}
