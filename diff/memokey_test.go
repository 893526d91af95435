package diff

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/internal/benchdata"
)

func TestMemoKeyNamesContentAndLiveVersion(t *testing.T) {
	obj := func(data map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "a", "namespace": "ns", "labels": map[string]any{"x": "1", "y": "2"}}, "data": data}}
	}
	live := obj(map[string]any{"k": "v"})
	live.SetUID("u1")
	live.SetResourceVersion("10")

	k1, ok := MemoKey(obj(map[string]any{"k": "v"}), live)
	if !ok {
		t.Fatal("a live object with a resourceVersion is memoizable")
	}
	k2, _ := MemoKey(obj(map[string]any{"k": "v"}), live)
	if k1 != k2 {
		t.Fatalf("equal inputs, different keys: %s, %s", k1, k2)
	}
	for name, d := range map[string]*unstructured.Unstructured{
		"value":      obj(map[string]any{"k": "w"}),
		"key":        obj(map[string]any{"kk": "v"}),
		"type":       obj(map[string]any{"k": int64(1)}),
		"list":       obj(map[string]any{"k": []any{"v"}}),
		"extra":      obj(map[string]any{"k": "v", "l": ""}),
		"null":       obj(map[string]any{"k": nil}),
		"nested map": obj(map[string]any{"k": map[string]any{}}),
	} {
		if k, _ := MemoKey(d, live); k == k1 {
			t.Errorf("%s changed, same key", name)
		}
	}
	live2 := live.DeepCopy()
	live2.SetResourceVersion("11")
	if k, _ := MemoKey(obj(map[string]any{"k": "v"}), live2); k == k1 {
		t.Error("a new resourceVersion must give a new key")
	}
	live3 := live.DeepCopy()
	live3.SetUID("u2")
	if k, _ := MemoKey(obj(map[string]any{"k": "v"}), live3); k == k1 {
		t.Error("a re-created object (new uid) must give a new key")
	}
	if k, ok := MemoKey(obj(map[string]any{"k": "v"}), nil); !ok || k == k1 {
		t.Errorf("a missing live object is memoizable and has its own key: %q %v", k, ok)
	}
	noRV := live.DeepCopy()
	noRV.SetResourceVersion("")
	if _, ok := MemoKey(obj(nil), noRV); ok {
		t.Error("a live object without resourceVersion is not memoizable")
	}
}

func BenchmarkMemoKeyDeployment(b *testing.B) {
	d, err := benchdata.Deployment("bench", "app")
	if err != nil {
		b.Fatal(err)
	}
	live := d.DeepCopy()
	live.SetResourceVersion("1")
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := MemoKey(d, live); !ok {
			b.Fatal("not memoizable")
		}
	}
}
