package health

import (
	"context"
	"testing"
)

// BenchmarkBuiltinCheck measures one DefaultChecker.Check per object for
// kinds with a Go check, on objects captured from the local cluster.
func BenchmarkBuiltinCheck(b *testing.B) {
	c, err := NewChecker(DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"deployment-web", "pod-solo", "statefulset-db", "job-once", "horizontalpodautoscaler-rs"} {
		obj := live(b, name)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if st, err := c.Check(obj); err != nil || st == nil {
					b.Fatal(st, err)
				}
			}
		})
	}
}

// BenchmarkGenericCheck measures the kstatus-like fallback.
func BenchmarkGenericCheck(b *testing.B) {
	c, err := NewChecker(DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	obj := object("example.com/v1", "Widget", map[string]any{"observedGeneration": int64(1), "conditions": []any{cond("Reconciling", "False", "", ""), cond("Ready", "True", "Succeeded", "ok")}})
	b.ReportAllocs()
	for b.Loop() {
		if st, _ := c.Check(obj); st == nil {
			b.Fatal("no status")
		}
	}
}

// BenchmarkLuaCheck measures one Lua health evaluation per object with a
// cached compile: the shipped cert-manager Certificate script (a typical
// script: a loop over conditions and a few string operations) on a
// realistic Certificate, through the whole checker.
func BenchmarkLuaCheck(b *testing.B) {
	c, err := NewChecker(DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct{ name, file string }{
		{"cert-manager.io/Certificate", "cert-manager.io/Certificate/testdata/healthy.yaml"},
		{"kustomize.toolkit.fluxcd.io/Kustomization", "kustomize.toolkit.fluxcd.io/Kustomization/testdata/healthy.yaml"},
		{"argoproj.io/Rollout", "argoproj.io/Rollout/testdata/healthy.yaml"},
	} {
		obj := loadScriptTestObject(b, tc.file)
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if st, err := c.CheckContext(context.Background(), obj); err != nil || st.Code != Healthy {
					b.Fatal(st, err)
				}
			}
		})
	}
}

// BenchmarkLuaCheckParallel runs the Certificate check on every core.
func BenchmarkLuaCheckParallel(b *testing.B) {
	c, err := NewChecker(DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	obj := loadScriptTestObject(b, "cert-manager.io/Certificate/testdata/healthy.yaml")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if st, err := c.Check(obj); err != nil || st.Code != Healthy {
				b.Fatal(st, err)
			}
		}
	})
}
