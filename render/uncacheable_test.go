package render_test

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/kubegitops/gitops/cache/store"
	"github.com/kubegitops/gitops/render"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// bare renders without telling the cache what decides its output.
type bare struct{ calls int }

func (b *bare) Render(context.Context, render.Input) ([]*unstructured.Unstructured, error) {
	b.calls++
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetName("made")
	return []*unstructured.Unstructured{u}, nil
}

// A tool whose renderer is not an Identifier is rendered every time rather
// than failing every render.
func TestToolWithoutIdentityIsRenderedUncached(t *testing.T) {
	b := &bare{}
	c := render.Cached(render.Tools{render.KindPlugin: b}, store.NewMemory(store.DefaultMemoryOptions()), render.DefaultCacheOptions())
	in := render.Input{FS: fstest.MapFS{"app/x": &fstest.MapFile{Data: []byte("x")}}, Path: "app", Tool: render.KindPlugin}
	for i := 0; i < 2; i++ {
		objs, err := c.Render(context.Background(), in)
		if err != nil || len(objs) != 1 {
			t.Fatalf("render %d: %v %v", i, objs, err)
		}
	}
	if b.calls != 2 {
		t.Fatalf("rendered %d times, want 2 (no caching)", b.calls)
	}
}
