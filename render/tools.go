package render

import (
	"context"
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

// Identity returns the identity of the renderer that renders in. A renderer
// that is not an Identifier cannot be cached; Identity fails for it.
func (t Tools) Identity(in Input) (Identity, error) {
	kind, r, err := t.pick(in)
	if err != nil {
		return Identity{}, err
	}
	id, ok := r.(Identifier)
	if !ok {
		return Identity{}, fmt.Errorf("renderer %T for %s is not an Identifier", r, kind)
	}
	return id.Identity(in)
}
