package engine

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/resource"
)

// BenchmarkUpdateIgnorer: the cost the watch goroutine pays per update of a
// tracked Deployment under Argo CD 3's default rules: a status-only change
// (stripped, compared, health judged twice: dropped) and a spec change
// (stripped, compared: announced).
func BenchmarkUpdateIgnorer(b *testing.B) {
	// Argo CD 3's defaults, as argocdcm.Defaults sets them.
	opts := DefaultOptions()
	opts.Tracking = resource.TrackingArgoCD()
	for _, r := range DefaultIgnoreResourceUpdates() {
		opts.IgnoreResourceUpdates = append(opts.IgnoreResourceUpdates, r)
	}
	hc, err := health.NewChecker(health.DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	u, err := newUpdateIgnorer(opts, hc)
	if err != nil {
		b.Fatal(err)
	}
	dep := func(replicas int64, collisions int64) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "namespace": "ns", "resourceVersion": "1", "generation": int64(1),
				"labels": map[string]any{"app": "web"}, "annotations": map[string]any{"a": "b"}},
			"spec": map[string]any{"replicas": replicas, "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
					"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx:1.27"}}}}},
			"status": map[string]any{"observedGeneration": int64(1), "replicas": int64(1), "updatedReplicas": int64(1),
				"availableReplicas": int64(1), "readyReplicas": int64(1), "collisionCount": collisions},
		}}
		if err := opts.Tracking.Set(o, "app"); err != nil {
			b.Fatal(err)
		}
		return o
	}
	old := dep(1, 0)
	b.Run("status-only", func(b *testing.B) {
		cur := dep(1, 1)
		b.ReportAllocs()
		for b.Loop() {
			if !u.Skip(old, cur) {
				b.Fatal("not skipped")
			}
		}
	})
	b.Run("spec-change", func(b *testing.B) {
		cur := dep(2, 0)
		b.ReportAllocs()
		for b.Loop() {
			if u.Skip(old, cur) {
				b.Fatal("skipped")
			}
		}
	})
}
