package render

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Render renders in with the renderer of its tool.
func (t Tools) Render(ctx context.Context, in Input) ([]*unstructured.Unstructured, error) {
	_, r, err := t.pick(in)
	if err != nil {
		return nil, err
	}
	return r.Render(ctx, in)
}

// ErrNotCacheable is returned by Tools.Identity when the renderer of the
// input's tool is not an Identifier: Cached then renders it every time.
var ErrNotCacheable = errors.New("renderer is not an Identifier")

// Identity returns the identity of the renderer that renders in. A renderer
// that is not an Identifier cannot be cached; Identity fails for it with
// ErrNotCacheable.
func (t Tools) Identity(in Input) (Identity, error) {
	kind, r, err := t.pick(in)
	if err != nil {
		return Identity{}, err
	}
	id, ok := r.(Identifier)
	if !ok {
		return Identity{}, fmt.Errorf("%w: %T renders %s", ErrNotCacheable, r, kind)
	}
	return id.Identity(in)
}
