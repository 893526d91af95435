package health

import (
	"context"
	"fmt"
	"strings"
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

// BenchmarkLuaCheck_LargeObject is the Certificate check on an object as a
// live cluster returns it: managedFields, a last-applied annotation and
// labels the script never reads (they are converted lazily, so they cost
// almost nothing).
func BenchmarkLuaCheck_LargeObject(b *testing.B) {
	c, err := NewChecker(DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	obj := loadScriptTestObject(b, "cert-manager.io/Certificate/testdata/healthy.yaml")
	var managed []any
	for i := 0; i < 20; i++ {
		managed = append(managed, map[string]any{
			"manager": fmt.Sprintf("controller-%d", i), "operation": "Update", "apiVersion": "cert-manager.io/v1",
			"fieldsV1": map[string]any{"f:status": map[string]any{"f:conditions": map[string]any{".": map[string]any{}, "k:{\"type\":\"Ready\"}": map[string]any{"f:message": map[string]any{}, "f:status": map[string]any{}}}}},
		})
	}
	obj.SetManagedFields(nil)
	obj.Object["metadata"].(map[string]any)["managedFields"] = managed
	labels := map[string]string{}
	for i := 0; i < 30; i++ {
		labels[fmt.Sprintf("label-%d", i)] = "value"
	}
	obj.SetLabels(labels)
	obj.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": strings.Repeat("x", 4096)})
	b.ReportAllocs()
	for b.Loop() {
		if st, err := c.Check(obj); err != nil || st.Code != Healthy {
			b.Fatal(st, err)
		}
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
