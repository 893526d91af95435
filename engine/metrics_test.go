package engine

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// The engine's metrics land on the registerer the host injects (never the
// global one) and count what happened.
func TestMetricsOnInjectedRegisterer(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	reg := prometheus.NewRegistry()
	e := newEngine(t, func(o *Options) { o.Registerer = reg })
	app := dirApp(ns, repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"}), ns)
	if _, err := e.Refresh(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Sync(context.Background(), app, SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	if n := testutil.ToFloat64(e.metrics.Syncs.WithLabelValues(app.Name, "Succeeded")); n != 1 {
		t.Fatalf("gitops_sync_total{phase=Succeeded} = %v", n)
	}
	if n := testutil.ToFloat64(e.metrics.GitRequests.WithLabelValues("resolve", "ok")); n < 2 {
		t.Fatalf("resolve requests counted: %v", n)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"gitops_reconcile_duration_seconds": false, "gitops_reconcile_total": false, "gitops_sync_total": false,
		"gitops_source_requests_total": false, "gitops_render_duration_seconds": false, "gitops_render_pending": false,
		"gitops_cluster_cache_objects": false, "gitops_sync_operations_in_flight": false}
	for _, f := range families {
		if _, ok := want[f.GetName()]; ok {
			want[f.GetName()] = true
		}
	}
	for name, seen := range want {
		if !seen {
			t.Errorf("metric %s not on the injected registry", name)
		}
	}
	// A second engine on the same registry does not fail.
	if _, err := newWithBuiltins(Options{Clusters: []ClusterConfig{{Name: "x", Config: cluster.Config()}}, Registerer: reg}); err != nil {
		t.Fatalf("second engine on one registry: %v", err)
	}
}
