package sync

import (
	"context"
	"testing"

	"github.com/kubegitops/gitops/hooks"
	"github.com/kubegitops/gitops/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Client-side apply removes a field deleted from Git (three-way merge with
// the last-applied annotation); after a switch to server-side apply the
// ownership is migrated, so a field deleted later is removed too instead of
// staying behind owned by the old manager.
func TestClientSideApplyAndMigrationToServerSide(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	csa, _ := newSyncer(t, func(o *syncerSetup) { o.ClientSideApply = true })
	ctx := context.Background()
	v1 := decode(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: '1', b: '2', c: '3'}\n")
	res, err := csa.Sync(ctx, Request{App: "shop", Desired: v1, Namespace: ns})
	mustSucceed(t, res, err)
	cm, _ := get(t, gvrConfigMaps, ns, "c")
	if cm.GetAnnotations()[resource.AnnotationLastApplied] == "" {
		t.Fatal("client-side apply left no last-applied annotation")
	}
	v2 := decode(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: '1', b: '2'}\n")
	res, err = csa.Sync(ctx, Request{App: "shop", Desired: v2, Namespace: ns})
	mustSucceed(t, res, err)
	if cm, _ := get(t, gvrConfigMaps, ns, "c"); hasKey(cm.Object["data"], "c") {
		t.Fatal("client-side apply kept a field deleted from Git")
	}

	ssa, _ := newSyncer(t, nil)
	v3 := decode(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: '1'}\n")
	res, err = ssa.Sync(ctx, Request{App: "shop", Desired: v3, Namespace: ns})
	mustSucceed(t, res, err)
	cm, _ = get(t, gvrConfigMaps, ns, "c")
	if hasKey(cm.Object["data"], "b") {
		t.Fatal("after migrating to server-side apply, a field deleted from Git stayed")
	}
	for _, mf := range cm.GetManagedFields() {
		if mf.Manager == "gitops-client-side" && mf.Operation == metav1.ManagedFieldsOperationUpdate {
			t.Fatal("client-side manager still owns fields after migration")
		}
	}
}

func hasKey(m any, key string) bool {
	mm, ok := m.(map[string]any)
	if !ok {
		return false
	}
	_, ok = mm[key]
	return ok
}

func TestReplaceAndCreateNamespace(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t) + "-new"
	t.Cleanup(func() {
		_ = dynamic0(t).Resource(gvrNamespace).Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	s, _ := newSyncer(t, nil)
	opts, _ := resource.ParseOptions("CreateNamespace=true")
	desired := decode(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, annotations: {argocd.argoproj.io/sync-options: Replace=true}}\ndata: {a: '1'}\n")
	res, err := s.Sync(context.Background(), Request{App: "shop", Desired: desired, Namespace: ns, Options: opts})
	mustSucceed(t, res, err)
	desired = decode(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, annotations: {argocd.argoproj.io/sync-options: Replace=true}}\ndata: {b: '2'}\n")
	res, err = s.Sync(context.Background(), Request{App: "shop", Desired: desired, Namespace: ns, Options: opts})
	mustSucceed(t, res, err)
	cm, _ := get(t, gvrConfigMaps, ns, "c")
	if hasKey(cm.Object["data"], "a") || !hasKey(cm.Object["data"], "b") {
		t.Fatalf("Replace=true did not replace the object whole: %v", cm.Object["data"])
	}
	if len(cm.GetManagedFields()) != 1 || cm.GetManagedFields()[0].Operation != metav1.ManagedFieldsOperationUpdate {
		t.Fatalf("Replace=true did not write with an update: %+v", cm.GetManagedFields())
	}
}

func TestPruneLastAndMirroredWaves(t *testing.T) {
	mk := func(name string, wave int, opts string) *task {
		o, _ := resource.ParseOptions(opts)
		return &task{key: resource.Key{Kind: "ConfigMap", Namespace: "x", Name: name}, phase: hooks.Sync, wave: wave, prune: true, opts: o}
	}
	prunes := []*task{mk("w0", 0, ""), mk("w1", 1, ""), mk("w5", 5, "")}
	mirrorWaves(prunes)
	if prunes[0].wave != 5 || prunes[1].wave != 1 || prunes[2].wave != 0 {
		t.Fatalf("mirrored waves %d %d %d", prunes[0].wave, prunes[1].wave, prunes[2].wave)
	}
	live := decodeOne(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: late, namespace: x, annotations: {argocd.argoproj.io/sync-options: PruneLast=true}}\n")
	tasks := []*task{{key: resource.Key{Kind: "ConfigMap", Namespace: "x", Name: "keep"}, phase: hooks.Sync, wave: 3}}
	tasks = addPruneTasks(tasks, []*unstructured.Unstructured{live}, resource.Options{})
	if p := tasks[1]; !p.prune || p.wave != 4 {
		t.Fatalf("PruneLast task in wave %d, want 4 (after the last Sync wave)", p.wave)
	}
}
