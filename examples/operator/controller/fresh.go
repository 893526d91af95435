package controller

import (
	"context"
	gosync "sync"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Versions remembers, per object, the resourceVersion a reconciler last
// wrote or read itself, to tell an informer's copy that lags behind the
// reconciler's own writes from one that does not (see Current). The zero
// value is ready; it is safe for concurrent use.
type Versions struct {
	known gosync.Map
}

// Remember records obj's resourceVersion as the latest its reconciler
// knows of, after it read or wrote obj.
func (v *Versions) Remember(obj client.Object) {
	if rv := obj.GetResourceVersion(); rv != "" {
		v.known.Store(client.ObjectKeyFromObject(obj), rv)
	}
}

// Forget drops what is known of an object that is gone.
func (v *Versions) Forget(key client.ObjectKey) {
	v.known.Delete(key)
}

// Current returns the object to reconcile: cached, the informer's copy,
// when it is the version its reconciler last wrote or read itself (v);
// otherwise the version the API server holds now, read through reader
// past the cache, and remembered. An informer's copy can lag behind the
// reconciler's own writes: a reconcile queued by a change of a watched
// object may start before the status written by the reconcile before it
// has come back through the watch, and would act on a state it has
// already left behind. Argo CD reads an Application afresh before it
// runs an operation for the same reason. Only a copy that differs from
// the last version known costs a read, so a quiet object costs none.
func Current[T client.Object](ctx context.Context, v *Versions, reader client.Reader, cached T) (T, error) {
	key := client.ObjectKeyFromObject(cached)
	if rv, ok := v.known.Load(key); ok && rv.(string) == cached.GetResourceVersion() {
		return cached, nil
	}
	fresh := cached.DeepCopyObject().(T)
	if err := reader.Get(ctx, key, fresh); err != nil {
		var zero T
		return zero, err
	}
	v.Remember(fresh)
	return fresh, nil
}

// current is Current for an Application, read through Options.Reader
// (the client given to New when there is no manager). Without it, a
// reconcile would take an operation that waits for a confirmation for a
// new one (restarting it), or run again an operation it has just
// finished and cleared.
func (r *Reconciler) current(ctx context.Context, cached *v1alpha1.Application) (*v1alpha1.Application, error) {
	reader := r.opts.Reader
	if reader == nil { // no manager: the client given to New
		reader = r.client
	}
	return Current(ctx, &r.versions, reader, cached)
}

// remember records app's resourceVersion as the latest this reconciler
// knows of, after it read or wrote the app.
func (r *Reconciler) remember(app *v1alpha1.Application) { r.versions.Remember(app) }

// forget drops what is known of an app that is gone.
func (r *Reconciler) forget(key client.ObjectKey) {
	r.versions.Forget(key)
	r.lastHard.Delete(key.String())
	r.repoErrors.Delete(key.String())
}
