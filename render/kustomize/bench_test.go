package kustomize

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubegitops/gitops/render"
)

// BenchmarkParallelBuilds measures what the OpenAPI lock costs: builds
// with the default schema share a read lock ("rwlock", this package) versus
// every build behind one global mutex ("global-mutex", as Flux's
// kustomize-controller does). lock-wait-ns/op is the time a build waited
// for the lock: the figure that does not depend on how busy the machine
// is. Run with -cpu 1,2,4 to see the scaling.
func BenchmarkParallelBuilds(b *testing.B) {
	snap := fixture(b)
	in := render.Input{FS: snap, Path: "overlays/prod"}
	b.Run("rwlock", func(b *testing.B) {
		r := New(DefaultOptions())
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := r.Render(context.Background(), in); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(r.LockWait().Nanoseconds())/float64(b.N), "lock-wait-ns/op")
	})
	b.Run("global-mutex", func(b *testing.B) {
		r := New(DefaultOptions())
		var mu sync.Mutex
		var wait atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				start := time.Now()
				mu.Lock()
				wait.Add(int64(time.Since(start)))
				_, err := r.Render(context.Background(), in)
				mu.Unlock()
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(wait.Load())/float64(b.N), "lock-wait-ns/op")
	})
}
