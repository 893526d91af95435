package sync

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// Limiter bounds the cluster writes in flight at once across every
// syncer that shares it (Collaborators.Writes): Argo CD's
// controller.kubectl.parallelism.limit, which bounds the kubectl runs of
// all of a controller's syncs together. It is safe for concurrent use.
type Limiter struct {
	slots chan struct{}
}

// NewLimiter returns a Limiter of n writes at once; nil when n < 1 (no
// limit, as Argo CD reads a value below 1).
func NewLimiter(n int) *Limiter {
	if n < 1 {
		return nil
	}
	return &Limiter{slots: make(chan struct{}, n)}
}

// Size is the number of writes the Limiter lets run at once.
func (l *Limiter) Size() int { return cap(l.slots) }

// InFlight is the number of writes running now.
func (l *Limiter) InFlight() int { return len(l.slots) }

// acquire takes a slot, or returns ctx's error.
func (l *Limiter) acquire(ctx context.Context) error {
	select {
	case l.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release gives back the slot acquire took.
func (l *Limiter) release() { <-l.slots }

// limitedResource is a resource client whose writes take a slot of a
// Limiter; reads pass through.
type limitedResource struct {
	dynamic.ResourceInterface
	l *Limiter
}

// Create creates obj once a slot of the Limiter is free, holding it
// for the call.
func (r limitedResource) Create(ctx context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions, sub ...string) (*unstructured.Unstructured, error) {
	if err := r.l.acquire(ctx); err != nil {
		return nil, err
	}
	defer r.l.release()
	return r.ResourceInterface.Create(ctx, obj, opts, sub...)
}

// Update updates obj once a slot of the Limiter is free, holding it
// for the call.
func (r limitedResource) Update(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions, sub ...string) (*unstructured.Unstructured, error) {
	if err := r.l.acquire(ctx); err != nil {
		return nil, err
	}
	defer r.l.release()
	return r.ResourceInterface.Update(ctx, obj, opts, sub...)
}

// UpdateStatus updates obj's status once a slot of the Limiter is free, holding it
// for the call.
func (r limitedResource) UpdateStatus(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	if err := r.l.acquire(ctx); err != nil {
		return nil, err
	}
	defer r.l.release()
	return r.ResourceInterface.UpdateStatus(ctx, obj, opts)
}

// Delete deletes the object name once a slot of the Limiter is free, holding it
// for the call.
func (r limitedResource) Delete(ctx context.Context, name string, opts metav1.DeleteOptions, sub ...string) error {
	if err := r.l.acquire(ctx); err != nil {
		return err
	}
	defer r.l.release()
	return r.ResourceInterface.Delete(ctx, name, opts, sub...)
}

// DeleteCollection deletes the objects list selects once a slot of the Limiter is free, holding it
// for the call.
func (r limitedResource) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, list metav1.ListOptions) error {
	if err := r.l.acquire(ctx); err != nil {
		return err
	}
	defer r.l.release()
	return r.ResourceInterface.DeleteCollection(ctx, opts, list)
}

// Patch patches the object name once a slot of the Limiter is free, holding it
// for the call.
func (r limitedResource) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*unstructured.Unstructured, error) {
	if err := r.l.acquire(ctx); err != nil {
		return nil, err
	}
	defer r.l.release()
	return r.ResourceInterface.Patch(ctx, name, pt, data, opts, sub...)
}

// Apply applies obj (server-side) once a slot of the Limiter is free, holding it
// for the call.
func (r limitedResource) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, sub ...string) (*unstructured.Unstructured, error) {
	if err := r.l.acquire(ctx); err != nil {
		return nil, err
	}
	defer r.l.release()
	return r.ResourceInterface.Apply(ctx, name, obj, opts, sub...)
}

// ApplyStatus applies obj's status (server-side) once a slot of the Limiter is free, holding it
// for the call.
func (r limitedResource) ApplyStatus(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions) (*unstructured.Unstructured, error) {
	if err := r.l.acquire(ctx); err != nil {
		return nil, err
	}
	defer r.l.release()
	return r.ResourceInterface.ApplyStatus(ctx, name, obj, opts)
}

// delayWave waits Options.WaveDelay between two waves, or until ctx ends,
// without the host's slot (as every wait).
func (op *operation) delayWave(ctx context.Context) {
	d := op.s.opts.WaveDelay
	if d <= 0 {
		return
	}
	op.yield()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
