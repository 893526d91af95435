package sync

import (
	"context"
	gosync "sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegitops/gitops/hooks"
)

// TestHookWithTheLegacyFinalizerIsReplaced: a hook left by an earlier
// version holds the legacy finalizer. Recreating it (BeforeHookCreation)
// must take that finalizer off, or the delete never completes; the new run
// holds only Argo CD's finalizer, and loses it once it succeeded.
func TestHookWithTheLegacyFinalizerIsReplaced(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	old := decodeOne(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hook\n  annotations: {argocd.argoproj.io/hook: PreSync}\ndata: {run: old}\n")
	old.SetNamespace(ns)
	old.SetFinalizers([]string{hooks.LegacyFinalizer})
	created, err := dyn(t).Resource(gvrConfigMaps).Namespace(ns).Create(context.Background(), old, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var mu gosync.Mutex
	var held []string
	client := dyn(t).Resource(gvrConfigMaps).Namespace(ns)
	s, _ := newSyncer(t, func(o *syncerSetup) {
		o.WaveTimeout = 30 * time.Second
		o.OnProgress = func(p Progress) {
			cm, err := client.Get(context.Background(), "hook", metav1.GetOptions{})
			if err == nil && cm.GetUID() != created.GetUID() && len(cm.GetFinalizers()) > 0 {
				mu.Lock()
				held = cm.GetFinalizers()
				mu.Unlock()
			}
		}
	})
	desired := decode(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hook\n  annotations: {argocd.argoproj.io/hook: PreSync}\ndata: {run: new}\n")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := s.Sync(ctx, Request{App: "shop", Revision: "abc", Desired: desired, Namespace: ns})
	mustSucceed(t, res, err)
	cm, ok := get(t, gvrConfigMaps, ns, "hook")
	if !ok || cm.GetUID() == created.GetUID() {
		t.Fatalf("the hook was not recreated (found %v)", ok)
	}
	if f := cm.GetFinalizers(); len(f) != 0 {
		t.Fatalf("finalizers left on the completed hook: %v", f)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(held) > 0 && (len(held) != 1 || held[0] != "argocd.argoproj.io/hook-finalizer") {
		t.Fatalf("the running hook held %v, want Argo CD's finalizer only", held)
	}
}
