package controller_test

import (
	"context"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/examples/operator/controller"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// laggingCache is an informer's cache that has not yet seen the
// reconciler's last writes: Get returns the Application as it was.
type laggingCache struct {
	client.Client
	app *v1alpha1.Application
}

func (l laggingCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if out, ok := obj.(*v1alpha1.Application); ok && key == client.ObjectKeyFromObject(l.app) {
		l.app.DeepCopyInto(out)
		return nil
	}
	return l.Client.Get(ctx, key, obj, opts...)
}

// TestLaggingCacheDoesNotRunAFinishedOperationAgain: a reconcile that
// starts before the informer has seen the status and the cleared
// operation the reconcile before it wrote (here: a cache that still
// holds the Application with its operation) reads the Application afresh
// and does not run the finished operation a second time.
func TestLaggingCacheDoesNotRunAFinishedOperationAgain(t *testing.T) {
	c := newClient(t)
	ns := cluster.TestNamespace(t)
	dest := cluster.TestNamespace(t)
	repo := repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: once}\n"})
	o := &operator{ns: ns, c: c}
	o.create(t, newApp(ns, appSpec{name: "once", repo: repo, dest: dest}))
	o.patch(t, "once", map[string]any{"operation": map[string]any{"sync": map[string]any{}}})
	before := o.waitApp(t, "once", "the operation written", func(a observed) bool { return a.Operation != nil })

	opts := controller.DefaultOptions()
	opts.Engine = newEngine(t, nil, nil)
	opts.Reader = c
	r, err := controller.New(laggingCache{Client: c, app: before.Application}, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "once"}}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	done := o.waitApp(t, "once", "the operation done and cleared", func(a observed) bool {
		s := a.Status.OperationState
		return a.Operation == nil && s != nil && s.Phase == "Succeeded"
	})
	// The cache still holds the Application with its operation.
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	after := o.waitApp(t, "once", "read", func(observed) bool { return true })
	if n := len(after.Status.History); n != 1 {
		t.Fatalf("the finished operation ran again from the lagging cache: %d history entries\n%s", n, after)
	}
	if !after.Status.OperationState.StartedAt.Equal(&done.Status.OperationState.StartedAt) || after.Operation != nil {
		t.Fatalf("the operation state changed: was started %v, now %s", done.Status.OperationState.StartedAt, after)
	}
}
