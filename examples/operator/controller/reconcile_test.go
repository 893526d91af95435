package controller_test

import (
	"context"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/examples/operator/controller"
	"github.com/kubegitops/gitops/internal/gitserver"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestReconcileWritesStatusOnlyWhenChanged calls the reconciler directly
// (no manager): the first reconcile writes the status and asks to come
// back after the interval; a second one, with nothing changed, writes
// nothing; a refresh that fails returns its error, for the controller's
// backoff, after writing the condition.
func TestReconcileWritesStatusOnlyWhenChanged(t *testing.T) {
	c := newClient(t)
	ns := cluster.TestNamespace(t)
	opts := controller.DefaultOptions()
	opts.Engine = newEngine(t, nil, nil)
	r, err := controller.New(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	repo := repoDir(t, map[string]string{"app/web.yaml": webManifests})
	o := &operator{ns: ns, c: c}
	o.create(t, newApp(ns, appSpec{name: "quiet", repo: repo, dest: "default"}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "quiet"}}

	res, err := r.Reconcile(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter < opts.Interval || res.RequeueAfter > opts.Interval+opts.Interval/10 {
		t.Errorf("requeue after %v, want the interval %v with jitter", res.RequeueAfter, opts.Interval)
	}
	first := o.waitApp(t, "quiet", "status written", func(a observed) bool { return a.Status.Sync.Status == "OutOfSync" })
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	second := o.waitApp(t, "quiet", "status read", func(observed) bool { return true })
	if first.ResourceVersion != second.ResourceVersion {
		t.Errorf("an unchanged reconcile wrote the app: resourceVersion %s -> %s\nbefore: %s\nafter: %s",
			first.ResourceVersion, second.ResourceVersion, first, second)
	}

	bad := newApp(ns, appSpec{name: "unreachable", repo: repo, dest: "default"})
	bad.Spec.Destination = v1alpha1.ApplicationDestination{Server: "https://elsewhere.example", Namespace: "default"}
	o.create(t, bad)
	res, err = r.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "unreachable"}})
	if err == nil || res.RequeueAfter != 0 {
		t.Errorf("failed refresh: result %+v, err %v; want an error for the backoff", res, err)
	}
	got := o.waitApp(t, "unreachable", "condition", func(a observed) bool { return len(a.Status.Conditions) > 0 })
	if got.Status.Conditions[0].Type != "ComparisonError" {
		t.Errorf("status: %s", got)
	}

	if res, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "never-created"}}); err != nil || res != (reconcile.Result{}) {
		t.Errorf("reconcile of a missing app: %+v, %v", res, err)
	}
}

// TestPeriodicRefreshOff calls the reconciler directly: with a negative
// Interval (Argo CD's timeout.reconciliation: 0) a refresh asks for no
// periodic requeue, and with a HardInterval too it comes back for the hard
// refresh only, after that interval.
func TestPeriodicRefreshOff(t *testing.T) {
	c := newClient(t)
	ns := cluster.TestNamespace(t)
	repo := repoDir(t, map[string]string{"app/web.yaml": webManifests})
	o := &operator{ns: ns, c: c}
	o.create(t, newApp(ns, appSpec{name: "off", repo: repo, dest: "default"}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "off"}}
	for _, hard := range []time.Duration{0, time.Hour} {
		opts := controller.DefaultOptions()
		opts.Engine = newEngine(t, nil, func(o *gitops.Options) { o.Interval = -1 })
		opts.Interval, opts.HardInterval = -1, hard
		r, err := controller.New(c, opts)
		if err != nil {
			t.Fatal(err)
		}
		res, err := r.Reconcile(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if res.RequeueAfter > hard || res.RequeueAfter < hard-time.Minute {
			t.Errorf("hard interval %s: requeue after %v, want %v", hard, res.RequeueAfter, hard)
		}
		o.waitApp(t, "off", "compared", func(a observed) bool { return a.Status.Sync.Status == "OutOfSync" })
	}
}

// TestHardIntervalResolvesBranchesAgain: with periodic refreshes off and
// branch resolutions cached for an hour, a commit on the real Git server
// reaches the app only through HardInterval (Argo CD's
// timeout.hard.reconciliation), which resolves the branch again.
func TestHardIntervalResolvesBranchesAgain(t *testing.T) {
	ctx := context.Background()
	gs, err := gitserver.Start(ctx, gitserver.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gs.Close() })
	cm := func(v string) []byte {
		return []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hard}\ndata: {v: \"" + v + "\"}\n")
	}
	first, err := gs.CreateRepository(ctx, "hard", fstest.MapFS{"app/cm.yaml": {Data: cm("1")}})
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t)
	ns := cluster.TestNamespace(t)
	stop := runOperatorWith(t, c, ns, nil, func(o *gitops.Options) { o.Interval, o.RefCacheTTL = -1, time.Hour },
		func(o *controller.Options) { o.Interval, o.HardInterval = -1, 2*time.Second })
	t.Cleanup(stop)
	o := &operator{ns: ns, c: c}
	app := newApp(ns, appSpec{name: "hard", repo: gs.RepoURL("hard"), dest: "default"})
	app.Spec.Source.TargetRevision = gs.Branch()
	o.create(t, app)
	o.waitApp(t, "hard", "compared at the first commit", func(a observed) bool { return a.Status.Sync.Revision == first })
	second, err := gs.Commit(ctx, "hard", "v2", map[string][]byte{"app/cm.yaml": cm("2")})
	if err != nil {
		t.Fatal(err)
	}
	o.waitApp(t, "hard", "compared at the second commit", func(a observed) bool { return a.Status.Sync.Revision == second })
}
