package engine

import (
	"context"
	"errors"
	"fmt"
	gosync "sync"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/shard"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/dir"
)

// offlineLiveEngine is an engine whose only destination is offline: Run
// keeps its app set, refreshes fail (nothing to compare against), which is
// all the live-set API tests look at. stop ends Run and closes the engine
// (once; the test's end calls it too).
func offlineLiveEngine(t *testing.T, tweak func(*Options)) (e *Engine, stop func()) {
	t.Helper()
	opts := DefaultOptions()
	opts.Clusters = []ClusterConfig{{Name: "offline", Server: "https://offline.invalid"}}
	opts.Interval = time.Hour
	if tweak != nil {
		tweak(&opts)
	}
	e, err := newWithBuiltins(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = e.Run(ctx, nil) }()
	eventually(t, 10*time.Second, "Run started", e.Apps().Running)
	var once gosync.Once
	stop = func() { once.Do(func() { cancel(); <-done; e.Close() }) }
	t.Cleanup(stop)
	return e, stop
}

func offlineApp(namespace, name, path string) Application {
	a := *dirApp(name, "/nonexistent", "ns")
	a.Namespace = namespace
	a.Spec.Source.Path = path
	a.Spec.Destination.Server = "https://offline.invalid"
	return a
}

// TestEngineRunningFollowsRun: Running is false before Run, true while it
// runs and false once it returned.
func TestEngineRunningFollowsRun(t *testing.T) {
	opts := DefaultOptions()
	opts.Clusters = []ClusterConfig{{Name: "offline", Server: "https://offline.invalid"}}
	e, err := newWithBuiltins(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.Apps().Running() {
		t.Fatal("Running before Run")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = e.Run(ctx, nil) }()
	eventually(t, 10*time.Second, "Running while Run runs", e.Apps().Running)
	cancel()
	<-done
	if e.Apps().Running() {
		t.Fatal("Running after Run returned")
	}
}

// TestEngineOptionsAreNewsDefaultsAndACopy: Options returns what New
// filled in, and changing the returned Clusters does not change the
// engine's.
func TestEngineOptionsAreNewsDefaultsAndACopy(t *testing.T) {
	opts := DefaultOptions()
	opts.Clusters = []ClusterConfig{{Name: "offline", Server: "https://offline.invalid"}}
	opts.Interval = 0 // New's default
	e, err := newWithBuiltins(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	got := e.Settings().Options()
	if got.Interval != DefaultOptions().Interval || got.ControlNamespace != "argocd" {
		t.Fatalf("Options: interval %v, control namespace %q", got.Interval, got.ControlNamespace)
	}
	got.Clusters[0].Name = "changed"
	if e.Settings().Options().Clusters[0].Name != "offline" {
		t.Fatal("a change to the returned Clusters reached the engine")
	}
}

// TestEngineSourceIsTheEnginesOwn: Source returns one Source per kind for
// the engine's life (a reader shares its caches), and the host's
// Options.SourceFor when set.
func TestEngineSourceIsTheEnginesOwn(t *testing.T) {
	opts := DefaultOptions()
	opts.Clusters = []ClusterConfig{{Name: "offline", Server: "https://offline.invalid"}}
	e, err := newWithBuiltins(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	a, errA := e.Sources().Source("https://git.example/a.git")
	b, errB := e.Sources().Source("https://git.example/b.git")
	if errA != nil || errB != nil || a == nil || a != b {
		t.Fatalf("two Git URLs: %v (%v), %v (%v); want one shared source", a, errA, b, errB)
	}
	if d, err := e.Sources().Source("/srv/repo"); err != nil || d == a {
		t.Fatalf("a folder: %v (%v), want the folder source", d, err)
	}
	host := dir.New(dir.DefaultOptions())
	opts.SourceFor = func(string) (source.Source, error) { return host, nil }
	e2, err := newWithBuiltins(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	if s, err := e2.Sources().Source("https://git.example/a.git"); err != nil || s != host {
		t.Fatalf("with SourceFor: %v (%v), want the host's source", s, err)
	}
}

// TestEngineManagedAppReadsByKey: ManagedApp finds an app by its
// v1alpha1.AppKey (the control namespace's apps and another namespace's
// alike), returns a copy (changing it changes nothing in Run), and
// reports false for a key Run does not hold or when Run is not running.
func TestEngineManagedAppReadsByKey(t *testing.T) {
	e, stop := offlineLiveEngine(t, nil)
	web, other := offlineApp("argocd", "web", "one"), offlineApp("team", "web", "two")
	for _, a := range []Application{web, other} {
		if err := e.Apps().Upsert(a); err != nil {
			t.Fatal(err)
		}
	}
	got, ok := e.Apps().ManagedApp(v1alpha1.AppKey{Namespace: "argocd", Name: "web"})
	if !ok || got.Spec.Source.Path != "one" {
		t.Fatalf("argocd/web: %v %+v", ok, got.Spec.Source)
	}
	if bare, ok := e.Apps().ManagedApp(v1alpha1.AppKey{Name: "web"}); !ok || bare.Spec.Source.Path != "one" {
		t.Fatalf("the bare name of a control-namespace app: %v", ok)
	}
	if got, ok := e.Apps().ManagedApp(v1alpha1.KeyOf(&other)); !ok || got.Spec.Source.Path != "two" {
		t.Fatalf("team/web: %v %+v", ok, got.Spec.Source)
	}
	got.Spec.Source.Path = "changed"
	got.Labels = map[string]string{"x": "y"}
	if again, _ := e.Apps().ManagedApp(v1alpha1.KeyOf(&other)); again.Spec.Source.Path != "two" || again.Labels != nil {
		t.Fatalf("a change to the returned app reached Run: %+v", again)
	}
	if _, ok := e.Apps().ManagedApp(v1alpha1.AppKey{Namespace: "team", Name: "none"}); ok {
		t.Fatal("an app Run does not hold was found")
	}
	stop()
	if _, ok := e.Apps().ManagedApp(v1alpha1.KeyOf(&web)); ok {
		t.Fatal("an app was found after Run returned")
	}
}

// TestEngineCompareAndUpsertNeverLosesAnotherWrite: the write takes
// effect only while Run holds what the writer read; a write computed from
// a stale read is refused (and the other writer's change stays), a write
// from the current read goes through, and nil expects no app of the key.
func TestEngineCompareAndUpsertNeverLosesAnotherWrite(t *testing.T) {
	e, stop := offlineLiveEngine(t, nil)
	key := v1alpha1.AppKey{Namespace: "team", Name: "web"}
	if wrote, err := e.Apps().CompareAndUpsert(nil, offlineApp("team", "web", "v1")); err != nil || !wrote {
		t.Fatalf("create with nil expected: %v %v", wrote, err)
	}
	if wrote, err := e.Apps().CompareAndUpsert(nil, offlineApp("team", "web", "again")); err != nil || wrote {
		t.Fatalf("create over an existing app: %v %v, want refused", wrote, err)
	}
	read, _ := e.Apps().ManagedApp(key)
	// Another writer changes the app after our read.
	if err := e.Apps().Upsert(offlineApp("team", "web", "theirs")); err != nil {
		t.Fatal(err)
	}
	if wrote, err := e.Apps().CompareAndUpsert(&read, offlineApp("team", "web", "ours")); err != nil || wrote {
		t.Fatalf("write from a stale read: %v %v, want refused", wrote, err)
	}
	if cur, _ := e.Apps().ManagedApp(key); cur.Spec.Source.Path != "theirs" {
		t.Fatalf("the other writer's change was lost: %q", cur.Spec.Source.Path)
	}
	read, _ = e.Apps().ManagedApp(key)
	if wrote, err := e.Apps().CompareAndUpsert(&read, offlineApp("team", "web", "ours")); err != nil || !wrote {
		t.Fatalf("write from the current read: %v %v", wrote, err)
	}
	if cur, _ := e.Apps().ManagedApp(key); cur.Spec.Source.Path != "ours" {
		t.Fatalf("after the write: %q", cur.Spec.Source.Path)
	}
	// The step after: an app gone since the read is not written back.
	if err := e.Apps().Remove(v1alpha1.AppKey{Namespace: "team", Name: "web"}); err != nil {
		t.Fatal(err)
	}
	if wrote, err := e.Apps().CompareAndUpsert(&read, offlineApp("team", "web", "late")); err != nil || wrote {
		t.Fatalf("write to a removed app: %v %v, want refused", wrote, err)
	}
	bad := offlineApp("team", "web", "x")
	bad.Spec.Source = nil
	var invalid *InvalidApplicationError
	if _, err := e.Apps().CompareAndUpsert(nil, bad); !errors.As(err, &invalid) || invalid.App != "web" {
		t.Fatalf("an invalid app: %v", err)
	}
	stop()
	if _, err := e.Apps().CompareAndUpsert(nil, offlineApp("team", "web", "v1")); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("after Run: %v, want ErrNotRunning", err)
	}
}

// TestEngineOnHintNotifiesUntilStopped: every Hint reaches a subscriber
// with the URL as given, with or without Run, until stop; stopping twice
// is harmless and other subscribers go on.
func TestEngineOnHintNotifiesUntilStopped(t *testing.T) {
	opts := DefaultOptions()
	opts.Clusters = []ClusterConfig{{Name: "offline", Server: "https://offline.invalid"}}
	e, err := newWithBuiltins(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var first, second []string
	stop := e.Apps().OnHint(func(u string) { first = append(first, u) })
	stop2 := e.Apps().OnHint(func(u string) { second = append(second, u) })
	defer stop2()
	e.Apps().Hint("https://git.example/a.git")
	stop()
	stop()
	e.Apps().Hint("https://git.example/b")
	if fmt.Sprint(first) != "[https://git.example/a.git]" || fmt.Sprint(second) != "[https://git.example/a.git https://git.example/b]" {
		t.Fatalf("first %v, second %v", first, second)
	}
}

// TestEngineOwnsFollowsTheSharder: two replicas share four apps through
// real Leases: each app is owned by exactly one replica (which one is the
// Sharder's hash), ManagedApp finds every app on both, and a key neither
// holds is owned by none.
func TestEngineOwnsFollowsTheSharder(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	var engines []*Engine
	for i := range 2 {
		sopts := shard.DefaultOptions()
		sopts.Namespace, sopts.Group, sopts.Identity = ns, "owns", fmt.Sprintf("replica-%d", i)
		sopts.LeaseDuration, sopts.RenewDeadline, sopts.RetryPeriod = 6*time.Second, 4*time.Second, 500*time.Millisecond
		m, err := shard.New(cluster.Config(), sopts)
		if err != nil {
			t.Fatal(err)
		}
		e := newEngine(t, func(o *Options) { o.Interval = time.Hour; o.Sharder = m })
		var apps []*Application
		for _, n := range []string{"a", "b", "c", "d"} {
			apps = append(apps, dirApp(ns+"-"+n, "/nonexistent", ns))
		}
		startRun(t, e, apps...)
		engines = append(engines, e)
	}
	keys := []v1alpha1.AppKey{{Name: ns + "-a"}, {Name: ns + "-b"}, {Name: ns + "-c"}, {Name: ns + "-d"}}
	eventually(t, 2*time.Minute, "each app owned by exactly one replica", func() bool {
		for _, key := range keys {
			owners := 0
			for _, e := range engines {
				if e.Apps().Owns(key) {
					owners++
				}
			}
			if owners != 1 {
				return false
			}
		}
		return true
	})
	for _, e := range engines {
		for _, key := range keys {
			if _, ok := e.Apps().ManagedApp(key); !ok {
				t.Fatalf("%s not held by a replica (ManagedApp ignores ownership)", key)
			}
		}
		if e.Apps().Owns(v1alpha1.AppKey{Name: ns + "-none"}) {
			t.Fatal("an app no replica holds is owned")
		}
	}
}
