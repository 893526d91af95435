package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/appstatus"
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
	if st.Sync != appstatus.Unknown || len(st.Resources) != 0 {
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

// TestEscapingAppPathIsRefused: an app path that climbs out of the
// repository ("../../x") fails with the typed path-escape error the
// renderers give, not with fs's "invalid argument", naming the field
// (Argo CD's "app path outside root"), not the parameter override file
// beside the path that nobody wrote.
func TestEscapingAppPathIsRefused(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"})
	e := newEngine(t, nil)
	for _, p := range []string{"../../etc", "app/../../x", "../"} {
		app := dirApp(ns, dir, ns)
		app.Spec.Source.Path = p
		st, err := e.Refresh(context.Background(), app)
		var pe *render.PathError
		if !errors.As(err, &pe) || !errors.Is(err, render.ErrOutsideRoot) || strings.Contains(err.Error(), "invalid argument") {
			t.Fatalf("refresh of path %q: got %v, want a render.PathError wrapping ErrOutsideRoot", p, err)
		}
		var ape *AppPathError
		if want := fmt.Sprintf("spec.source.path %q: app path outside root", p); !errors.As(err, &ape) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), ".argocd-source") {
			t.Fatalf("refresh of path %q: %v, want an *AppPathError saying %q", p, err, want)
		}
		if len(st.Resources) != 0 {
			t.Fatalf("path %q rendered something: %+v", p, st)
		}
		if _, err := e.Sync(context.Background(), app, SyncRequest{}); !errors.Is(err, render.ErrOutsideRoot) {
			t.Fatalf("sync of path %q: got %v, want ErrOutsideRoot", p, err)
		}
	}
	// The step after: the path inside the tree renders.
	app := dirApp(ns, dir, ns)
	if st, err := e.Refresh(context.Background(), app); err != nil || len(st.Resources) != 1 {
		t.Fatalf("path inside the tree: %+v, %v", st, err)
	}
}

// TestEscapingOverridePathIsRefused: a path that climbs out of the
// repository in a parameter override file (a Helm value file or
// --set-file, a Kustomize component) is the same typed path-escape error.
func TestEscapingOverridePathIsRefused(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	chart := map[string]string{
		"chart/Chart.yaml":        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
		"chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
		"kust/kustomization.yaml": "resources: [cm.yaml]\n",
		"kust/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: k}\n",
	}
	cases := map[string]string{
		"chart/.argocd-source.yaml": "helm:\n  valueFiles: [../../../etc/passwd]\n",
		"kust/.argocd-source.yaml":  "kustomize:\n  components: [../../x]\n",
	}
	e := newEngine(t, nil)
	for file, override := range cases {
		files := map[string]string{file: override}
		for k, v := range chart {
			files[k] = v
		}
		dir := repoDir(t, files)
		app := dirApp(ns, dir, ns)
		app.Spec.Source.Path = strings.Split(file, "/")[0]
		_, err := e.Refresh(context.Background(), app)
		if !errors.Is(err, render.ErrOutsideRoot) || strings.Contains(err.Error(), "invalid argument") {
			t.Errorf("%s: got %v, want an error wrapping ErrOutsideRoot", file, err)
		}
	}
	fileParam := map[string]string{"chart/.argocd-source.yaml": "helm:\n  fileParameters: [{name: x, path: ../../../etc/passwd}]\n"}
	for k, v := range chart {
		fileParam[k] = v
	}
	app := dirApp(ns, repoDir(t, fileParam), ns)
	app.Spec.Source.Path = "chart"
	if _, err := e.Refresh(context.Background(), app); !errors.Is(err, render.ErrOutsideRoot) {
		t.Errorf("fileParameters: got %v, want an error wrapping ErrOutsideRoot", err)
	}
}
