package controller

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"testing"
	"time"

	gitops "github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appset"
)

// TestRunAppSetsRefusesBadStarts: two sets of one namespace and name are
// refused by New; Runner.Run needs the engine's Run (ErrNotRunning) and
// runs once (ErrStarted); Status knows only the sets the Runner was given.
func TestRunAppSetsRefusesBadStarts(t *testing.T) {
	set := listSet(t, "")
	opts := gitops.DefaultOptions()
	opts.Clusters = []gitops.ClusterConfig{{Name: "offline", Server: "https://offline.invalid"}}
	idle, err := gitops.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if _, err := New(idle, []appset.ApplicationSet{set, set}, DefaultOptions()); err == nil {
		t.Fatal("New took a set twice")
	}
	if err := Run(context.Background(), idle, []appset.ApplicationSet{set}, DefaultOptions()); !errors.Is(err, gitops.ErrNotRunning) {
		t.Fatalf("Run without the engine's Run: %v, want ErrNotRunning", err)
	}

	e, stop := offlineRunEngine(t)
	defer stop()
	r, err := New(e, []appset.ApplicationSet{set}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Status("argocd", "other"); ok {
		t.Fatal("Status of a set the Runner was not given")
	}
	if st, ok := r.Status("argocd", "fleet"); !ok || st.Step != -1 || st.Reconciles != 0 {
		t.Fatalf("Status before Run: %+v %v", st, ok)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	eventually(t, 20*time.Second, "the first generation", func() bool {
		st, _ := r.Status("argocd", "fleet")
		return st.Reconciles > 0
	})
	if err := r.Run(ctx); !errors.Is(err, ErrStarted) {
		t.Fatalf("a second Run: %v, want ErrStarted", err)
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Run: %v", err)
	}
	// The step after: Status still reads the last outcome.
	if st, ok := r.Status("argocd", "fleet"); !ok || !slices.Equal(st.Applications, []v1alpha1.AppKey{{Namespace: "argocd", Name: "web-dev"}, {Namespace: "argocd", Name: "web-prod"}}) {
		t.Fatalf("Status after Run: %+v %v", st, ok)
	}
}

// TestAppSetGenerateOptionsFromEngine: the fields left nil are the
// engine's: its clusters, the strict Application check, and its sources
// for git generators' repositories; fields the host set are kept.
func TestAppSetGenerateOptionsFromEngine(t *testing.T) {
	opts := gitops.DefaultOptions()
	opts.Clusters = []gitops.ClusterConfig{{Name: "offline", Server: "https://offline.invalid"}}
	e, err := gitops.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	g := GenerateOptions(e, DefaultOptions())
	cls, err := g.Clusters.Clusters(context.Background())
	if err != nil || len(cls) != 1 || cls[0].Name != "offline" || cls[0].Server != "https://offline.invalid" {
		t.Fatalf("clusters %+v %v", cls, err)
	}
	if g.Decisions != nil {
		t.Fatal("decisions without the in-cluster destination")
	}
	if err := g.Validate(map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": "x"}, "spec": map[string]any{"bogus": true}}); err == nil {
		t.Fatal("an Application with an unknown field validated")
	}
	dir := repoDir(t, map[string]string{"apps/one/cm.yaml": "kind: ConfigMap\n"})
	snap, err := g.Repos.Snapshot(context.Background(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Stat(snap, "apps/one/cm.yaml"); err != nil {
		t.Fatalf("the engine's folder source: %v", err)
	}
	mine := appset.StaticClusters{{Name: "mine", Server: "https://mine"}}
	kept := DefaultOptions()
	kept.Generate.Clusters = mine
	if got, ok := GenerateOptions(e, kept).Clusters.(appset.StaticClusters); !ok || len(got) != 1 || got[0].Name != "mine" {
		t.Fatalf("the host's clusters replaced: %+v", got)
	}
}
