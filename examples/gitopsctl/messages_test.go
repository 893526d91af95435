package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDiffSaysPruneFalseIsKept: an object with Prune=false that left Git
// is shown as kept, not as something sync --prune deletes (Argo CD marks
// it "ignored (Prune=false)"), and sync --prune indeed keeps it.
func TestDiffSaysPruneFalseIsKept(t *testing.T) {
	ns := cluster.TestNamespace(t)
	appFile, repo := namedAppFixture(t, ns, "keeper")
	kc := []string{"--app", appFile, "--kubeconfig", cluster.Kubeconfig()}
	keep := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep\n  annotations:\n    argocd.argoproj.io/sync-options: Prune=false\ndata:\n  a: b\n"
	if err := os.WriteFile(filepath.Join(repo, "keep.yaml"), []byte(keep), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI(t, append([]string{"sync"}, kc...)...); code != 0 {
		t.Fatalf("sync: exit %d\n%s\n%s", code, out, errOut)
	}
	if err := os.Remove(filepath.Join(repo, "keep.yaml")); err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"before sync --prune", "after sync --prune"} {
		code, out, errOut := runCLI(t, append([]string{"diff"}, kc...)...)
		if code != 1 {
			t.Fatalf("diff %s: exit %d, want 1\n%s\n%s", step, code, out, errOut)
		}
		mustContain(t, "diff "+step, out, "===== ConfigMap "+ns+"/keep: live only, not in Git (kept: its sync-options say Prune=false")
		if strings.Contains(out, "keep: live only, not in Git (pruned by sync --prune)") {
			t.Errorf("diff %s says a Prune=false object is pruned by sync --prune:\n%s", step, out)
		}
		if step == "before sync --prune" {
			if code, out, errOut := runCLI(t, append([]string{"sync", "--prune"}, kc...)...); code != 0 {
				t.Fatalf("sync --prune: exit %d\n%s\n%s", code, out, errOut)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := clientset(t).CoreV1().ConfigMaps(ns).Get(ctx, "keep", metav1.GetOptions{}); err != nil {
		t.Fatalf("sync --prune deleted the Prune=false ConfigMap: %v", err)
	}
}

// TestRenderFailureSaysToolAndRevisionOnce: status of an app whose Git
// source holds a file that does not parse names the tool and the commit
// rendered, and prints the failure once, not once per layer.
func TestRenderFailureSaysToolAndRevisionOnce(t *testing.T) {
	ns := cluster.TestNamespace(t)
	git, commit := testfiles.GitRepo(t, gitserver.DefaultOptions(), "app", fstest.MapFS{"deploy/cm.yaml": {Data: []byte("kind: ConfigMap\nmetadata: [unclosed\n")}})
	appFile := filepath.Join(t.TempDir(), "app.yaml")
	app := fmt.Sprintf("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: broken\nspec:\n  source: {repoURL: %s, targetRevision: main, path: deploy}\n  destination: {server: https://kubernetes.default.svc, namespace: %s}\n", git.RepoURL("app"), ns)
	if err := os.WriteFile(appFile, []byte(app), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "status", "--app", appFile, "--kubeconfig", cluster.Kubeconfig())
	if code != 2 {
		t.Fatalf("status of an app that does not render: exit %d, want 2\n%s\n%s", code, out, errOut)
	}
	all := out + errOut
	mustContain(t, "status output", all, `render plain app "broken" at deploy`, "at "+commit[:12], "ComparisonError")
	if n := strings.Count(all, "render plain app"); n != 1 {
		t.Errorf("the render failure is printed %d times, want once:\n%s", n, all)
	}
}

// TestSyncFailurePrintedOnce: a sync the API server refuses says why
// once, in the row of the object that failed, not again in the result
// line, a second table and the command's error.
func TestSyncFailurePrintedOnce(t *testing.T) {
	ns := cluster.TestNamespace(t)
	appFile, repo := namedAppFixture(t, ns, "refused")
	bad := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Not_A_Valid_Name\ndata:\n  a: b\n"
	if err := os.WriteFile(filepath.Join(repo, "bad.yaml"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "sync", "--app", appFile, "--kubeconfig", cluster.Kubeconfig())
	if code != 1 {
		t.Fatalf("sync of an invalid object: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	all := out + errOut
	mustContain(t, "sync output", all, "ConfigMap "+ns+"/Not_A_Valid_Name", "Result: Failed")
	if n := strings.Count(all, "metadata.name: Invalid value"); n != 1 {
		t.Errorf("the API server's refusal is printed %d times, want once:\n%s", n, all)
	}
}

// TestAppPathMessages: status of an app whose spec.source.path leaves the
// repository names the field (not a parameter override file the user never
// wrote), and of one whose path is not in the commit says "app path does
// not exist in the repository" with the commit, and shows that commit as
// the Revision.
func TestAppPathMessages(t *testing.T) {
	ns := cluster.TestNamespace(t)
	git, commit := testfiles.GitRepo(t, gitserver.DefaultOptions(), "app", fstest.MapFS{"deploy/cm.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")}})
	for _, c := range []struct{ path, want string }{
		{"../../", `spec.source.path "../../": app path outside root`},
		{"apps/missing", `spec.source.path "apps/missing": app path does not exist in the repository at ` + commit[:12]},
	} {
		appFile := filepath.Join(t.TempDir(), "app.yaml")
		app := fmt.Sprintf("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: paths\nspec:\n  source: {repoURL: %s, targetRevision: main, path: %q}\n  destination: {server: https://kubernetes.default.svc, namespace: %s}\n", git.RepoURL("app"), c.path, ns)
		if err := os.WriteFile(appFile, []byte(app), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runCLI(t, "status", "--app", appFile, "--kubeconfig", cluster.Kubeconfig())
		if code != 2 {
			t.Fatalf("status of path %q: exit %d, want 2\n%s\n%s", c.path, code, out, errOut)
		}
		all := out + errOut
		mustContain(t, "status of path "+c.path, all, c.want, "Revision:  "+commit+"\n", "ComparisonError")
		for _, bad := range []string{".argocd-source", "readdir", "file does not exist"} {
			if strings.Contains(all, bad) {
				t.Errorf("status of path %q says %q:\n%s", c.path, bad, all)
			}
		}
	}
}
