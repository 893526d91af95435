package cache

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// A 410 Gone on one kind's watch relists that kind and no other. A real API
// server answers 410 only after etcd compaction, which a test cannot ask for,
// so the fault is injected into a fake dynamic client.
func TestGoneRelistsOnlyThatKind(t *testing.T) {
	cmGVR := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secGVR := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{cmGVR: "ConfigMapList", secGVR: "SecretList"},
		obj("v1", "ConfigMap", "ns", "a", "u-a"), obj("v1", "Secret", "ns", "s", "u-s"))
	var gone atomic.Bool
	dyn.PrependWatchReactor("configmaps", func(k8stesting.Action) (bool, watch.Interface, error) {
		if gone.Swap(true) {
			return false, nil, nil // later watches: the tracker's
		}
		w := watch.NewRaceFreeFake()
		w.Error(&metav1.Status{Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonExpired, Message: "too old resource version"})
		return true, w, nil
	})

	opts := DefaultOptions().withDefaults()
	c := &ClusterCache{opts: opts, with: Collaborators{}.withDefaults(), dyn: dyn, listSem: make(chan struct{}, 2), store: newStore(), taints: map[watchID]*KindError{}, events: newBatcher(opts.BatchInterval)}
	m, err := newMetrics(c, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	c.metrics = m
	ctx := testCtx(t)
	cmw := newKindWatch(ctx, c, watchID{gvr: cmGVR}, apiResource{gvk: cmGVR.GroupVersion().WithKind("ConfigMap"), gvr: cmGVR, namespaced: true})
	secw := newKindWatch(ctx, c, watchID{gvr: secGVR}, apiResource{gvk: secGVR.GroupVersion().WithKind("Secret"), gvr: secGVR, namespaced: true})
	go cmw.run()
	go secw.run()
	defer cmw.stop()
	defer secw.stop()

	lists := func(resource string) int {
		n := 0
		for _, a := range dyn.Actions() {
			if a.GetVerb() == "list" && a.GetResource().Resource == resource {
				n++
			}
		}
		return n
	}
	<-secw.firstDone
	waitFor(t, 10*time.Second, "ConfigMaps relisted after 410", func() bool { return lists("configmaps") >= 2 })
	if n := lists("secrets"); n != 1 {
		t.Errorf("secrets listed %d times, want 1", n)
	}
	if got := testutil.ToFloat64(c.metrics.relists); got != 1 {
		t.Errorf("relists metric = %v, want 1", got)
	}
	if len(c.Tainted()) != 0 {
		t.Errorf("a 410 tainted a kind: %v", c.Tainted())
	}
	// The relisted kind keeps serving and watching.
	if _, err := dyn.Resource(cmGVR).Namespace("ns").Create(ctx, obj("v1", "ConfigMap", "ns", "b", "u-b"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "ConfigMap created after the relist cached", func() bool { _, ok := c.Get(cmKey("ns", "b")); return ok })
	if _, ok := c.Get(cmKey("ns", "a")); !ok {
		t.Error("object lost across the relist")
	}
}
