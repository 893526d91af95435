package kustomize

import (
	"context"
	"sync"
	"testing"

	"github.com/kubegitops/gitops/render"
)

// BenchmarkParallelBuilds measures what the OpenAPI lock costs: builds
// with the default schema share a read lock ("rwlock", this package) versus
// every build behind one global mutex ("global-mutex", as Flux's
// kustomize-controller does). Run with -cpu 1,2,4 to see the scaling.
func BenchmarkParallelBuilds(b *testing.B) {
	snap := fixture(b)
	in := render.Input{FS: snap, Path: "overlays/prod"}
	r := New(DefaultOptions())
	b.Run("rwlock", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := r.Render(context.Background(), in); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("global-mutex", func(b *testing.B) {
		var mu sync.Mutex
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				mu.Lock()
				_, err := r.Render(context.Background(), in)
				mu.Unlock()
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
