package actions

import (
	"context"
	"testing"

	"github.com/kubegitops/gitops/health"
)

// BenchmarkRestart measures a built-in action (discovery, then restart with
// its result validated and its merge patch computed) against the baseline
// of a Lua health check of the same object in the same sandbox.
func BenchmarkRestart(b *testing.B) {
	ctx := context.Background()
	obj := deployment()
	b.Run("baseline-health-script", func(b *testing.B) {
		e := health.NewLuaEngine(health.DefaultLuaOptions())
		s, err := e.Compile("bench", `if obj.spec.replicas > 0 then return {status = "Healthy"} end return {status = "Progressing"}`)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.Run(ctx, s, obj); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("restart-action", func(b *testing.B) {
		r, err := New(DefaultOptions())
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.Run(ctx, obj, "restart", nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
