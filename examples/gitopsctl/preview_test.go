package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/preview"
)

// gitopsctl preview on a real Git server, with the live comparison on
// the local cluster: an app synced at base, a change that edits one
// ConfigMap, removes one and adds one. The JSON says so object by object,
// and the live comparison says what a sync would update, create and prune
// (the engine's own diff); the exit status is 1. The same revision twice
// is no change (exit 0); a bad format is an error (exit 2).
func TestPreviewCommandWithLiveComparison(t *testing.T) {
	ns := cluster.TestNamespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	gs := testfiles.GitServer(t, gitserver.DefaultOptions())
	cm := func(name, color string) []byte {
		return []byte(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  color: %s\n", name, color))
	}
	first, err := gs.CreateRepository(ctx, "shop", fstest.MapFS{
		"deploy/flags.yaml": {Data: cm("flags", "blue")},
		"deploy/old.yaml":   {Data: cm("old", "grey")},
	})
	if err != nil {
		t.Fatal(err)
	}
	appFile := filepath.Join(t.TempDir(), "app.yaml")
	app := fmt.Sprintf("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: flags\nspec:\n  source: {repoURL: %s, targetRevision: main, path: deploy}\n  destination: {server: https://kubernetes.default.svc, namespace: %s}\n", gs.RepoURL("shop"), ns)
	if err := os.WriteFile(appFile, []byte(app), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "sync", "--app", appFile, "--kubeconfig", cluster.Kubeconfig()); code != 0 {
		t.Fatalf("sync: exit %d: %s", code, errOut)
	}
	second, err := gs.Commit(ctx, "shop", "green, without old, with new", map[string][]byte{
		"deploy/flags.yaml": cm("flags", "green"), "deploy/old.yaml": nil, "deploy/new.yaml": cm("new", "red"),
	})
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "preview", "--repo", gs.RepoURL("shop"), "--base", first, "--head", second, "--branch", "main",
		"--apps", appFile, "--kubeconfig", cluster.Kubeconfig(), "--format", "json")
	if code != 1 {
		t.Fatalf("preview: exit %d, want 1: %s\n%s", code, errOut, out)
	}
	var rep preview.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(rep.Apps) != 1 || rep.Apps[0].Name != "flags" || rep.Apps[0].Status != preview.AppChanged {
		t.Fatalf("apps %+v", rep.Apps)
	}
	changes := func(objs []preview.ObjectChange) string {
		var s []string
		for _, o := range objs {
			s = append(s, string(o.Change)+" "+o.Key.String())
		}
		return strings.Join(s, ", ")
	}
	want := fmt.Sprintf("changed ConfigMap %[1]s/flags, added ConfigMap %[1]s/new, removed ConfigMap %[1]s/old", ns)
	if got := changes(rep.Apps[0].Objects); got != want {
		t.Fatalf("objects %q, want %q", got, want)
	}
	live := rep.Apps[0].Live
	if live == nil || live.Error != "" || live.Sync != "OutOfSync" {
		t.Fatalf("live %+v", live)
	}
	if got := changes(live.Objects); got != want {
		t.Fatalf("live objects %q, want %q", got, want)
	}
	if !strings.Contains(live.Objects[0].Diff, "+  color: green") {
		t.Fatalf("live diff of flags:\n%s", live.Objects[0].Diff)
	}
	// The app has no automated sync with prune: its sync would leave old
	// as an orphan, and says so in JSON and Markdown; the Markdown carries
	// the live diff the JSON has.
	if !live.Objects[2].Kept || live.Objects[0].Kept || !strings.Contains(live.Objects[2].Diff, "does not prune") {
		t.Fatalf("live objects %+v", live.Objects)
	}
	code, out, _ = runCLI(t, "preview", "--repo", gs.RepoURL("shop"), "--base", first, "--head", second, "--branch", "main",
		"--apps", appFile, "--kubeconfig", cluster.Kubeconfig())
	if code != 1 || !strings.Contains(out, "- sync would leave ConfigMap "+ns+"/old (requires prune)") || strings.Contains(out, "would prune") ||
		!strings.Contains(out, "| `flags` | changed | 1 | 1 | 1 |") {
		t.Fatalf("markdown: exit %d\n%s", code, out)
	}
	if i := strings.Index(out, "Live cluster"); i < 0 || !strings.Contains(out[i:], "+  color: green") {
		t.Fatalf("markdown without the live diff:\n%s", out)
	}
	// With automated prune, the same change prunes old.
	pruning := strings.Replace(app, "  destination:", "  syncPolicy: {automated: {prune: true}}\n  destination:", 1)
	if err := os.WriteFile(appFile, []byte(pruning), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCLI(t, "preview", "--repo", gs.RepoURL("shop"), "--base", first, "--head", second, "--branch", "main",
		"--apps", appFile, "--kubeconfig", cluster.Kubeconfig())
	if code != 1 || !strings.Contains(out, "- sync would prune ConfigMap "+ns+"/old") || strings.Contains(out, "requires prune") {
		t.Fatalf("markdown with automated prune: exit %d\n%s", code, out)
	}
	if code, out, errOut = runCLI(t, "preview", "--repo", gs.RepoURL("shop"), "--base", second, "--head", second, "--apps", appFile); code != 0 || !strings.Contains(out, "No app changes.") {
		t.Fatalf("no change: exit %d: %s\n%s", code, errOut, out)
	}
	if code, _, errOut = runCLI(t, "preview", "--repo", gs.RepoURL("shop"), "--base", first, "--head", second, "--apps", appFile, "--format", "xml"); code != 2 || !strings.Contains(errOut, `--format "xml"`) {
		t.Fatalf("bad format: exit %d: %s", code, errOut)
	}
}

// gitopsctl preview --repo DIR of a clone without an origin remote (a CI
// workspace made by git init): the Applications that name the folder, by
// its path or by a file:// URL, are previewed; no --repo-url is needed.
func TestPreviewLocalCloneWithoutOrigin(t *testing.T) {
	dir := t.TempDir()
	repo, err := gogit.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	commit := func(color string) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, "deploy"), 0o755); err != nil {
			t.Fatal(err)
		}
		cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flags\ndata:\n  color: " + color + "\n"
		if err := os.WriteFile(filepath.Join(dir, "deploy", "flags.yaml"), []byte(cm), 0o644); err != nil {
			t.Fatal(err)
		}
		wt, err := repo.Worktree()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := wt.Add("deploy/flags.yaml"); err != nil {
			t.Fatal(err)
		}
		h, err := wt.Commit(color, &gogit.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1700000000, 0)}})
		if err != nil {
			t.Fatal(err)
		}
		return h.String()
	}
	first, second := commit("blue"), commit("green")
	apps := t.TempDir()
	for name, url := range map[string]string{"by-path": dir, "by-file-url": "file://" + dir} {
		app := fmt.Sprintf("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: %s\nspec:\n  source: {repoURL: %q, targetRevision: HEAD, path: deploy}\n  destination: {server: https://kubernetes.default.svc, namespace: shop}\n", name, url)
		if err := os.WriteFile(filepath.Join(apps, name+".yaml"), []byte(app), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := runCLI(t, "preview", "--repo", dir, "--base", first, "--head", second, "--apps", apps, "--format", "json")
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s\n%s", code, errOut, out)
	}
	var rep preview.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var got []string
	for _, a := range rep.Apps {
		got = append(got, a.Name+" "+string(a.Status))
	}
	if want := []string{"by-file-url changed", "by-path changed"}; !slices.Equal(got, want) {
		t.Fatalf("apps %q, want %q", got, want)
	}
}
