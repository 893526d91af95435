package kustomize

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubegitops/gitops/internal/reftools"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/rendertest"
)

func binaryTree() *rendertest.Snapshot {
	return rendertest.NewSnapshot(fstest.MapFS{
		"base/kustomization.yaml": {Data: []byte("resources:\n  - cm.yaml\n")},
		"base/cm.yaml":            {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: b\n")},
		"app/kustomization.yaml":  {Data: []byte("resources:\n  - ../base\n")},
	})
}

// TestVersionRunsTheRegisteredBinary: an app whose kustomize.version is
// registered is built by that binary (the reference kustomize 5.8.2), with
// the version's build options and the app's overrides, from the repository
// root as Argo CD runs it.
func TestVersionRunsTheRegisteredBinary(t *testing.T) {
	kbin := reftools.ForTest(t, reftools.Kustomize)
	opts := DefaultOptions()
	opts.Versions = map[string]Binary{"v5.8.2": {Path: kbin, BuildOptions: []string{"--enable-managedby-label"}}}
	in := render.Input{FS: binaryTree(), Path: "app", Kustomize: &render.KustomizeSource{Version: "v5.8.2", NamePrefix: "team-"}}
	objs, err := New(opts).Render(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].GetName() != "team-settings" {
		t.Fatalf("objects %v, want the ConfigMap team-settings", objs)
	}
	// The in-process build never adds the label; the binary does, with its
	// own version, because the version's build options ask for it.
	if got := objs[0].GetLabels()["app.kubernetes.io/managed-by"]; got != "kustomize-v5.8.2" {
		t.Errorf("managed-by label %q, want kustomize-v5.8.2 (the binary's)", got)
	}
	// The committed tree is unchanged: the overrides went into a copy.
	data, _ := in.FS.(*rendertest.Snapshot).MapFS["app/kustomization.yaml"]
	if strings.Contains(string(data.Data), "team-") {
		t.Errorf("the app's kustomization was rewritten: %s", data.Data)
	}
}

// TestVersionNotRegistered: a version no binary is registered for fails
// with Argo CD's message naming it.
func TestVersionNotRegistered(t *testing.T) {
	opts := DefaultOptions()
	opts.Versions = map[string]Binary{"v5.8.2": {Path: "/bin/false"}}
	in := render.Input{FS: binaryTree(), Path: "app", Kustomize: &render.KustomizeSource{Version: "v3.5.4"}}
	_, err := New(opts).Render(context.Background(), in)
	var nr *VersionNotRegisteredError
	if !errors.As(err, &nr) || nr.Version != "v3.5.4" || !strings.Contains(err.Error(), "kustomize version v3.5.4 is not registered") {
		t.Fatalf("err %v, want VersionNotRegisteredError naming v3.5.4", err)
	}
	if !errors.Is(err, render.ErrInvalidInput) {
		t.Errorf("err %v is not ErrInvalidInput", err)
	}
}

// script writes an executable shell script standing for a kustomize
// binary, for what a real one cannot show: its environment, endless
// output, a hang.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kustomize")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestVersionBinaryEnvironmentAndBounds: the binary gets the build
// environment and not the host's, its arguments are `build <path>` and the
// build options, and its output and time are bounded.
func TestVersionBinaryEnvironmentAndBounds(t *testing.T) {
	t.Setenv("GITOPS_HOST_SECRET", "hunter2")
	echo := script(t, `printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: env\ndata:\n  app: "%s"\n  secret: "%s"\n  args: "%s"\n' "$ARGOCD_APP_NAME" "$GITOPS_HOST_SECRET" "$*"`)
	endless := script(t, `exec yes`)
	hang := script(t, `exec sleep 30`)
	opts := DefaultOptions()
	opts.Versions = map[string]Binary{"echo": {Path: echo, BuildOptions: []string{"--reorder", "none"}}, "endless": {Path: endless}, "hang": {Path: hang}}
	opts.MaxBinaryOutputBytes = 1 << 20
	r := New(opts)
	in := func(v string) render.Input {
		return render.Input{FS: binaryTree(), Path: "app", Kustomize: &render.KustomizeSource{Version: v, BuildEnv: map[string]string{"ARGOCD_APP_NAME": "guestbook"}}}
	}
	objs, err := r.Render(context.Background(), in("echo"))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := objs[0].UnstructuredContent()["data"].(map[string]any)
	if data["app"] != "guestbook" || data["secret"] != "" || data["args"] != "build app --reorder none" {
		t.Errorf("binary saw %v, want the app name, no host secret, and `build app --reorder none`", data)
	}
	if _, err := r.Render(context.Background(), in("endless")); !errors.Is(err, render.ErrTooLarge) {
		t.Errorf("endless output: %v, want ErrTooLarge", err)
	}
	opts.BinaryTimeout = 200 * time.Millisecond
	if _, err := New(opts).Render(context.Background(), in("hang")); !errors.Is(err, ErrBinaryTimeout) {
		t.Errorf("hang: %v, want ErrBinaryTimeout", err)
	}
}
