package controller

import (
	"context"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// current returns the Application to reconcile: cached, the informer's
// copy, when it is the version this reconciler last wrote or read
// itself; otherwise the version the API server holds now, read past the
// cache. An informer's copy can lag behind the controller's own writes:
// a reconcile queued by a change of a managed object may start before
// the status written by the reconcile before it has come back through
// the watch, and would take an operation that waits for a confirmation
// for a new one (restarting it), or run again an operation it has just
// finished and cleared. Argo CD reads an Application afresh before it
// runs an operation for the same reason. Only a copy that differs from
// the last version known costs a read, so a quiet app costs none.
func (r *Reconciler) current(ctx context.Context, cached *v1alpha1.Application) (*v1alpha1.Application, error) {
	key := nameOf(cached)
	if rv, ok := r.known.Load(key); ok && rv.(string) == cached.ResourceVersion {
		return cached, nil
	}
	reader := r.opts.Reader
	if reader == nil { // no manager: the client given to New
		reader = r.client
	}
	fresh := &v1alpha1.Application{}
	if err := reader.Get(ctx, client.ObjectKeyFromObject(cached), fresh); err != nil {
		return nil, err
	}
	r.remember(fresh)
	return fresh, nil
}

// remember records app's resourceVersion as the latest this reconciler
// knows of, after it read or wrote the app.
func (r *Reconciler) remember(app *v1alpha1.Application) {
	if app.ResourceVersion != "" {
		r.known.Store(nameOf(app), app.ResourceVersion)
	}
}

// forget drops what is known of an app that is gone.
func (r *Reconciler) forget(key string) {
	r.known.Delete(key)
	r.lastHard.Delete(key)
}
