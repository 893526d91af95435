package appsets_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/examples/operator/appsets"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/yaml"
)

// laggingCache is an informer's cache that has not yet seen the
// reconciler's last status write: Get returns the set as it was (when
// set is not nil). List drops field selectors, which only a cache's
// indexes serve (the reconciler filters by owner itself).
type laggingCache struct {
	client.Client
	set *v1alpha1.ApplicationSet
}

func (l *laggingCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if out, ok := obj.(*v1alpha1.ApplicationSet); ok && l.set != nil && key == client.ObjectKeyFromObject(l.set) {
		l.set.DeepCopyInto(out)
		return nil
	}
	return l.Client.Get(ctx, key, obj, opts...)
}

func (l *laggingCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	lo := &client.ListOptions{}
	lo.ApplyOptions(opts)
	return l.Client.List(ctx, list, client.InNamespace(lo.Namespace))
}

// TestLaggingSetCacheKeepsThePendingSync: a reconcile that starts before
// the informer has seen the status the reconcile before it wrote (here: a
// cache that still holds the set from before its rollout asked for a
// sync) reads the set afresh. Judged against the stale status, the
// Application's pending operation would look like someone else's, and
// the Pending status would start again at a later time than the sync's
// start, so the rollout would wait forever for a sync that had run (CI
// saw TestRollingSync stuck so).
func TestLaggingSetCacheKeepsThePendingSync(t *testing.T) {
	t.Parallel()
	c, err := client.New(cluster.Config(), client.Options{Scheme: newScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	installCRDs(t, c)
	ns, dest := cluster.TestNamespace(t), cluster.TestNamespace(t)
	opts := gitops.DefaultOptions()
	opts.Clusters = []gitops.ClusterConfig{{Name: "in-cluster", Server: "https://kubernetes.default.svc", Config: cluster.Config()}}
	engine, err := gitops.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(engine.Close)
	set := &v1alpha1.ApplicationSet{}
	if err := yaml.UnmarshalStrict(fmt.Appendf(nil, `
metadata: {name: lag, namespace: %s}
spec:
  generators:
  - list: {elements: [{name: dev}]}
  strategy:
    type: RollingSync
    rollingSync:
      steps: [{matchExpressions: [{key: env, operator: In, values: [dev]}]}]
  template:
    metadata: {name: 'lag-{{name}}', labels: {env: '{{name}}'}}
    spec:
      project: default
      source: {repoURL: 'https://git.example/repo.git', targetRevision: main, path: app}
      destination: {server: 'https://kubernetes.default.svc', namespace: %s}
`, ns, dest), set); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	cache := &laggingCache{Client: c}
	aopts := appsets.DefaultOptions()
	aopts.Engine, aopts.ControllerNamespace, aopts.Reader = engine, ns, c
	r, err := appsets.New(cache, aopts)
	if err != nil {
		t.Fatal(err)
	}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "lag"}}
	reconcileOnce := func() *v1alpha1.ApplicationSet {
		t.Helper()
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
		got := &v1alpha1.ApplicationSet{}
		if err := c.Get(ctx, req.NamespacedName, got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	// The Application is generated and waits for its first comparison.
	if st := appStatuses(reconcileOnce())["lag-dev"]; st.Status != appsets.RolloutWaiting {
		t.Fatalf("before the comparison: %+v", st)
	}
	stale := &v1alpha1.ApplicationSet{}
	if err := c.Get(ctx, req.NamespacedName, stale); err != nil {
		t.Fatal(err)
	}
	// The Application controller finds it OutOfSync; the set asks for a sync.
	app := &v1alpha1.Application{}
	app.Namespace, app.Name = ns, "lag-dev"
	if err := c.Status().Patch(ctx, app, client.RawPatch(types.MergePatchType,
		[]byte(`{"status":{"sync":{"status":"OutOfSync","revision":"r1"},"health":{"status":"Missing"}}}`))); err != nil {
		t.Fatal(err)
	}
	pending := appStatuses(reconcileOnce())["lag-dev"]
	if pending.Status != appsets.RolloutPending || pending.LastTransitionTime == nil {
		t.Fatalf("after the comparison: %+v", pending)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
		t.Fatal(err)
	}
	if app.Operation == nil || app.Operation.InitiatedBy.Username != appsets.SyncInitiator {
		t.Fatalf("no sync asked for: %+v", app.Operation)
	}

	// The cache still holds the set from before the sync was asked for.
	cache.set = stale
	again := appStatuses(reconcileOnce())["lag-dev"]
	if again.Status != appsets.RolloutPending || again.Message != pending.Message || !again.LastTransitionTime.Equal(pending.LastTransitionTime) {
		t.Fatalf("a reconcile from the lagging cache rewrote the pending sync's status:\nwas %+v\nnow %+v", pending, again)
	}
}
