package sync

import (
	"context"
	"errors"
	"testing"

	"github.com/kubegitops/gitops/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// RespectIgnoreDifferences=true without a KeepIgnored is refused with a
// typed error before anything is written; with one, an existing object is
// applied as KeepIgnored returns it and an object to create as desired.
func TestRespectIgnoreDifferencesNeedsKeepIgnored(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	s, writes := newSyncer(t, nil)
	ctx := context.Background()
	opts, err := resource.ParseOptions("RespectIgnoreDifferences=true")
	if err != nil {
		t.Fatal(err)
	}
	desired := decode(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: git, b: git}\n")
	before := writes.count()
	_, err = s.Sync(ctx, Request{App: "shop", Desired: desired, Namespace: ns, Options: opts})
	var oe *OptionError
	if !errors.As(err, &oe) || oe.Option != "RespectIgnoreDifferences=true" || writes.count() != before {
		t.Fatalf("err %v, writes %d", err, writes.count()-before)
	}
	var calls int
	keep := func(_ context.Context, d, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		calls++
		out := d.DeepCopy()
		b, _, _ := unstructured.NestedString(live.Object, "data", "b")
		_ = unstructured.SetNestedField(out.Object, b, "data", "b")
		return out, nil
	}
	res, err := s.Sync(ctx, Request{App: "shop", Desired: desired, Namespace: ns, Options: opts, KeepIgnored: keep})
	mustSucceed(t, res, err)
	if calls != 0 {
		t.Fatalf("KeepIgnored called %d times for an object to create", calls)
	}
	cm, _ := get(t, gvrConfigMaps, ns, "c")
	_ = unstructured.SetNestedField(cm.Object, "live", "data", "b")
	_ = unstructured.SetNestedField(cm.Object, "live", "data", "a")
	if _, err := dyn(t).Resource(gvrConfigMaps).Namespace(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err = s.Sync(ctx, Request{App: "shop", Desired: desired, Namespace: ns, Options: opts, KeepIgnored: keep})
	mustSucceed(t, res, err)
	cm, _ = get(t, gvrConfigMaps, ns, "c")
	data := cm.Object["data"].(map[string]any)
	if calls != 1 || data["a"] != "git" || data["b"] != "live" {
		t.Fatalf("calls %d, data %v", calls, data)
	}
}
