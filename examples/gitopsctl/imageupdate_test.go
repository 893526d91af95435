package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
)

// image-update --dry-run prints the tag change and the kustomization diff
// and commits nothing; without --dry-run it commits; a constraint that does
// not parse exits 2 naming it.
func TestImageUpdateCommand(t *testing.T) {
	ctx := context.Background()
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	host := strings.TrimPrefix(reg.URL, "http://")
	for _, tag := range []string{"1.0.0", "1.0.1", "1.1.0-rc1", "latest"} {
		img, _ := random.Image(64, 1)
		ref, err := name.NewTag(host + "/team/app:" + tag)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(ref, img); err != nil {
			t.Fatal(err)
		}
	}
	opts := gitserver.DefaultOptions()
	opts.PushUsername, opts.PushPassword = "cli", "cli-push-secret"
	gs, _ := testfiles.GitRepo(t, opts, "cli", fstest.MapFS{
		"app/kustomization.yaml": {Data: []byte("resources: [web.yaml]\nimages:\n- name: app\n  newName: " + host + "/team/app\n  newTag: 1.0.0\n")},
		"app/web.yaml":           {Data: []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: web, image: app}]}\n")},
	})
	head, _ := gs.Head(ctx, "cli")
	writeAppFile := func(constraint string) string {
		f := filepath.Join(t.TempDir(), "app.yaml")
		app := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: cli
  annotations:
    argocd-image-updater.argoproj.io/image-list: web=%s/team/app:%s
    argocd-image-updater.argoproj.io/web.kustomize.image-name: app
    argocd-image-updater.argoproj.io/write-back-method: git
    argocd-image-updater.argoproj.io/write-back-target: kustomization
spec:
  source: {repoURL: %s, path: app, targetRevision: main}
  destination: {server: https://kubernetes.default.svc, namespace: default}
`, host, constraint, gs.RepoURL("cli"))
		if err := os.WriteFile(f, []byte(app), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	kc := []string{"--kubeconfig", cluster.Kubeconfig()}
	appFile := writeAppFile("~1.0")
	code, out, errOut := runCLI(t, append([]string{"image-update", "--app", appFile, "--dry-run"}, kc...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	mustContain(t, "dry run", out, `"1.0.0" -> "1.0.1"`, "--- a/app/kustomization.yaml", "-  newTag: 1.0.0", "+  newTag: 1.0.1", "dry run: nothing committed")
	if now, _ := gs.Head(ctx, "cli"); now != head {
		t.Fatal("the dry run committed")
	}

	t.Setenv("GITOPS_GIT_USERNAME", "cli")
	t.Setenv("GITOPS_GIT_PASSWORD", "cli-push-secret")
	code, out, errOut = runCLI(t, append([]string{"image-update", "--app", appFile}, kc...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	now, _ := gs.Head(ctx, "cli")
	mustContain(t, "update", out, "committed "+now+" to main")
	if now == head || strings.Contains(out+errOut, "cli-push-secret") {
		t.Fatalf("no commit, or the password was printed:\n%s%s", out, errOut)
	}
	// The step after: the repository has 1.0.1, nothing to do.
	code, out, _ = runCLI(t, append([]string{"image-update", "--app", appFile, "--dry-run"}, kc...)...)
	if code != 0 || !strings.Contains(out, "skipped: already runs 1.0.1") || strings.Contains(out, "->") {
		t.Fatalf("second run: exit %d\n%s", code, out)
	}

	code, _, errOut = runCLI(t, append([]string{"image-update", "--app", writeAppFile("~>>1"), "--dry-run"}, kc...)...)
	if code != 2 || !strings.Contains(errOut, "invalid version constraint") || !strings.Contains(errOut, `"cli"`) {
		t.Fatalf("bad constraint: exit %d\n%s", code, errOut)
	}
}
