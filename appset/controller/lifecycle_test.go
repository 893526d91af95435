package controller

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	gitops "github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appset"
)

// offlineRunEngine runs with one offline destination: Run and the Runner keep
// their app sets, refreshes fail (nothing to compare against), which is
// all these tests look at.
func offlineRunEngine(t *testing.T) (*gitops.Engine, func()) {
	t.Helper()
	opts := gitops.DefaultOptions()
	opts.Clusters = []gitops.ClusterConfig{{Name: "offline", Server: "https://offline.invalid"}}
	opts.Interval = time.Hour
	e, err := gitops.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = e.Run(ctx, nil) }()
	eventually(t, 10*time.Second, "Run started", func() bool { return e.Apps().Running() })
	return e, func() { cancel(); <-done; e.Close() }
}

func listSet(t *testing.T, extra string) appset.ApplicationSet {
	t.Helper()
	sets, err := appset.Load(strings.NewReader(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: fleet, namespace: argocd}
spec:
  generators:
  - list:
      elements: [{env: dev}, {env: prod}]
  template:
    metadata: {name: 'web-{{env}}'}
    spec:
      project: default
      source: {repoURL: https://git.example/web.git, targetRevision: main, path: 'envs/{{env}}'}
      destination: {server: https://offline.invalid, namespace: 'web-{{env}}'}
` + extra))
	if err != nil {
		t.Fatal(err)
	}
	return sets[0]
}

// managedSorted are the names of the apps e's Run manages, sorted.
func managedSorted(e *gitops.Engine) []string {
	return appNames(e.Apps().ManagedApps())
}

// appNames are the names of keys, sorted (the tests' apps share a
// namespace).
func appNames(keys []v1alpha1.AppKey) []string {
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k.Name)
	}
	slices.Sort(out)
	return out
}

// When Runner.Run returns, the apps it generated leave Run (nothing keeps
// them generated any more); a later Runner of the same set adopts
// them again, with no ownership error.
func TestRunAppSetsReleasesAndReadoptsItsApps(t *testing.T) {
	e, stop := offlineRunEngine(t)
	defer stop()
	set := listSet(t, "")
	want := []string{"web-dev", "web-prod"}
	for round := range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		ctl, err := New(e, []appset.ApplicationSet{set}, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		go func() { done <- ctl.Run(ctx) }()
		eventually(t, 20*time.Second, "the set's apps in Run", func() bool {
			st, ok := ctl.Status("argocd", "fleet")
			return ok && st.Reconciles > 0 && slices.Equal(managedSorted(e), want)
		})
		if st, _ := ctl.Status("argocd", "fleet"); st.Err != nil || !slices.Equal(appNames(st.Applications), want) {
			t.Fatalf("round %d: status %+v", round, st)
		}
		cancel()
		if err := <-done; err != context.Canceled {
			t.Fatalf("round %d: Runner.Run: %v", round, err)
		}
		if got := e.Apps().ManagedApps(); len(got) != 0 {
			t.Fatalf("round %d: apps still in Run after Runner.Run returned: %v", round, got)
		}
	}
	// An app the host gave Run itself is not taken by the Runner's exit.
	own := *dirApp("mine", "/nonexistent", "ns")
	own.Spec.Destination.Server = "https://offline.invalid"
	if err := e.Apps().Upsert(own); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, e, []appset.ApplicationSet{set}, DefaultOptions()) }()
	eventually(t, 20*time.Second, "the set's apps in Run again", func() bool { return len(e.Apps().ManagedApps()) == 3 })
	cancel()
	<-done
	if got := managedSorted(e); !slices.Equal(got, []string{"mine"}) {
		t.Fatalf("after Runner.Run: %v, want only the host's app", got)
	}
}

// ignoreApplicationDifferences: a field another writer changed in a
// generated app keeps its value through the set's updates when a rule
// names it (a pointer for all apps, a jq path for one app by name); a
// field no rule names is put back to the generated value.
func TestRunAppSetsIgnoreApplicationDifferences(t *testing.T) {
	e, stop := offlineRunEngine(t)
	defer stop()
	set := listSet(t, `  ignoreApplicationDifferences:
  - jsonPointers: [/spec/source/targetRevision]
  - name: web-prod
    jqPathExpressions: [.spec.source.path]
`)
	opts := DefaultOptions()
	opts.Interval = 50 * time.Millisecond
	ctl := startAppSets(t, e, []appset.ApplicationSet{set}, opts)
	eventually(t, 20*time.Second, "the set's apps in Run", func() bool { return len(e.Apps().ManagedApps()) == 2 })
	// Another writer (a person, an image updater) changes both apps.
	for _, name := range []string{"web-dev", "web-prod"} {
		a := managedApp(t, e, name)
		src := *a.Spec.Source
		src.TargetRevision, src.Path = "v2.0.0", "hand/"+name
		a.Spec.Source = &src
		if err := e.Apps().Upsert(a); err != nil {
			t.Fatal(err)
		}
	}
	// The set regenerates every 50 ms: wait for two more generations and
	// for web-dev's path to be put back.
	st0, _ := ctl.Status("argocd", "fleet")
	eventually(t, 20*time.Second, "the set to regenerate", func() bool {
		st, _ := ctl.Status("argocd", "fleet")
		return st.Reconciles >= st0.Reconciles+2 && managedApp(t, e, "web-dev").Spec.Source.Path == "envs/dev"
	})
	if st, _ := ctl.Status("argocd", "fleet"); st.Err != nil {
		t.Fatal(st.Err)
	}
	dev, prod := managedApp(t, e, "web-dev").Spec.Source, managedApp(t, e, "web-prod").Spec.Source
	if dev.TargetRevision != "v2.0.0" || prod.TargetRevision != "v2.0.0" {
		t.Errorf("targetRevision (ignored for every app) overwritten: dev %q prod %q", dev.TargetRevision, prod.TargetRevision)
	}
	if prod.Path != "hand/web-prod" {
		t.Errorf("web-prod's path (ignored for it by name) overwritten: %q", prod.Path)
	}
}
