package desired

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/render"
)

// Argo's override files merge onto the source: the app's own file after
// the shared one, lists replaced, maps merged; a file that would move the
// source, or is not YAML, is an error naming it.
func TestParameterOverrideFiles(t *testing.T) {
	app := &v1alpha1.Application{}
	app.Name = "web"
	src := v1alpha1.ApplicationSource{RepoURL: "https://git.example/r.git", Path: "app",
		Kustomize: &v1alpha1.ApplicationSourceKustomize{NamePrefix: "p-", Images: []string{"old=old:1"}}}
	fsys := fstest.MapFS{
		"app/.argocd-source.yaml":     {Data: []byte("kustomize:\n  namePrefix: shared-\n")},
		"app/.argocd-source-web.yaml": {Data: []byte("kustomize:\n  images: [app=reg/app:1.0.1]\n")},
		"app/.argocd-source-x.yaml":   {Data: []byte("kustomize: {namePrefix: other-app-}\n")},
	}
	got, err := withParameterOverrides(app, src, fsys)
	if err != nil {
		t.Fatal(err)
	}
	if got.Kustomize.NamePrefix != "shared-" || len(got.Kustomize.Images) != 1 || got.Kustomize.Images[0] != "app=reg/app:1.0.1" {
		t.Fatalf("merged %+v", got.Kustomize)
	}
	if src.Kustomize.Images[0] != "old=old:1" {
		t.Fatal("the app's spec was changed in place")
	}
	for name, content := range map[string]string{
		"moves the source": "repoURL: https://evil.example/r.git\n",
		"not YAML":         "kustomize: [\n",
	} {
		_, err := withParameterOverrides(app, src, fstest.MapFS{"app/.argocd-source-web.yaml": {Data: []byte(content)}})
		if err == nil || !strings.Contains(err.Error(), "app/.argocd-source-web.yaml") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// The override files are read inside the repository like every other
// file: a path that climbs out of it, or an override file that is a link
// out of it, is the typed path-escape error, not fs's "invalid argument".
func TestParameterOverridePathsStayInTheRoot(t *testing.T) {
	app := &v1alpha1.Application{}
	app.Name = "web"
	fsys := fstest.MapFS{
		"app/cm.yaml":                {Data: []byte("kind: ConfigMap\n")},
		"linked/.argocd-source.yaml": {Mode: fs.ModeSymlink, Data: []byte("../../../etc/passwd")},
	}
	for _, p := range []string{"../../", "app/../../x", "linked"} {
		src := v1alpha1.ApplicationSource{RepoURL: "https://git.example/r.git", Path: p}
		_, err := withParameterOverrides(app, src, fsys)
		var pe *render.PathError
		if !errors.As(err, &pe) || !errors.Is(err, render.ErrOutsideRoot) {
			t.Errorf("path %q: %v, want a render.PathError wrapping ErrOutsideRoot", p, err)
		}
	}
	if _, err := withParameterOverrides(app, v1alpha1.ApplicationSource{Path: "app"}, fsys); err != nil {
		t.Errorf("a path without override files: %v", err)
	}
}
