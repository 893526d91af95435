package cache

import (
	"reflect"
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// An entry stays in the 224-byte size class: one size more (the 288-byte
// class) and the cache's long-lived entries share spans with the groups of
// decoded maps, whose churn they then keep in use (BENCHMARKS.md, "Where
// the heap in use goes").
func TestEntryFitsItsSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(entry{}); n > 224 {
		t.Fatalf("an entry is %d bytes, want 224 or less", n)
	}
}

// An entry keeps its own strings (name, uid, owners' uids and names) in
// one allocation, and an update of the same object keeps the first
// version's: the decoder's small strings are all freed with the decode.
func TestEntryStringsShareOneAllocation(t *testing.T) {
	obj := func(uid, rv string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": "web-1", "namespace": "ns", "uid": uid, "resourceVersion": rv,
				"ownerReferences": []any{map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "rs-uid", "controller": true}}}}}
	}
	e := newEntry(obj("pod-uid", "1"), "", nil, false, codecFor(t))
	if e.key.Name != "web-1" || e.uid != "pod-uid" || len(e.owners) != 1 || e.owners[0].UID != "rs-uid" || e.owners[0].Name != "web" || !e.owners[0].Controller {
		t.Fatalf("entry after packing: %+v %+v", e.key, e.owners)
	}
	start := uintptr(unsafe.Pointer(unsafe.StringData(e.key.Name)))
	for i, s := range []string{e.key.Name, string(e.uid), string(e.owners[0].UID), e.owners[0].Name} {
		off := 0
		switch i {
		case 1:
			off = len("web-1")
		case 2:
			off = len("web-1pod-uid")
		case 3:
			off = len("web-1pod-uidrs-uid")
		}
		if got := uintptr(unsafe.Pointer(unsafe.StringData(s))); got != start+uintptr(off) {
			t.Fatalf("string %d (%q) is not at offset %d of the entry's one allocation", i, s, off)
		}
	}

	s := newStore()
	s.put(e)
	update := newEntry(obj("pod-uid", "2"), "", nil, false, codecFor(t))
	s.put(update)
	if unsafe.StringData(update.key.Name) != unsafe.StringData(e.key.Name) || &update.owners[0] != &e.owners[0] {
		t.Fatal("an update of the same object does not keep the first version's strings")
	}
	if update.resourceVersion != "2" || s.byKey[update.key] != update || s.byUID["pod-uid"] != update {
		t.Fatalf("the update is not the stored entry: %+v", update)
	}
	recreated := newEntry(obj("new-uid", "3"), "", nil, false, codecFor(t))
	s.put(recreated)
	if unsafe.StringData(recreated.key.Name) == unsafe.StringData(e.key.Name) || recreated.uid != "new-uid" || s.byUID["new-uid"] != recreated {
		t.Fatal("an object recreated under the same name shares the old one's strings")
	}
}

// codecFor is a codec for a test that builds entries without a cache.
func codecFor(t *testing.T) *wholeCodec {
	t.Helper()
	c, err := newWholeCodec()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A whole object is kept compressed: a Deployment's JSON in a third of
// its bytes or less (the dictionary holds its keys and defaults), read back as the object it was, by another cache's codec
// too (a stored form needs nothing but itself).
func TestWholeEntryIsKeptCompressed(t *testing.T) {
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON([]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"ns","uid":"5b1f6f44-8c1e-4e0f-9a43-2f6c1d7e9b10","resourceVersion":"1234567","labels":{"app":"web"}},
		"spec":{"replicas":1,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"registry.k8s.io/pause:3.10","imagePullPolicy":"IfNotPresent","terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler","terminationGracePeriodSeconds":30}}},
		"status":{"availableReplicas":1,"conditions":[{"lastTransitionTime":"2026-12-07T21:12:35Z","lastUpdateTime":"2026-12-07T21:12:35Z","message":"Deployment has minimum availability.","reason":"MinimumReplicasAvailable","status":"True","type":"Available"},{"lastTransitionTime":"2026-12-07T21:12:33Z","lastUpdateTime":"2026-12-07T21:12:35Z","message":"ReplicaSet \"web-6d4cf56db6\" has successfully progressed.","reason":"NewReplicaSetAvailable","status":"True","type":"Progressing"}],"observedGeneration":1,"readyReplicas":1,"replicas":1,"updatedReplicas":1}}`)); err != nil {
		t.Fatal(err)
	}
	plain, err := obj.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	e := newEntry(obj.DeepCopy(), "", nil, true, codecFor(t))
	if len(e.raw) == 0 || len(e.raw) > len(plain)/3 || cap(e.raw) > len(e.raw)+len(e.raw)/8 {
		t.Fatalf("a %d-byte Deployment is kept in %d bytes (capacity %d), want a third or less, without spare capacity", len(plain), len(e.raw), cap(e.raw))
	}
	if got := e.object(codecFor(t)); !reflect.DeepEqual(got.Object, obj.Object) {
		t.Fatalf("read back as\n%v\nwant\n%v", got.Object, obj.Object)
	}
}

// A stored form that does not decode (it cannot happen: the cache wrote
// it) reads back as the lean stand-in, never as an error or a panic.
func TestCorruptWholeEntryReadsLean(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c", "namespace": "ns", "uid": "u"}, "data": map[string]any{"k": "v"}}}
	e := newEntry(obj, "", nil, true, codecFor(t))
	e.raw = e.raw[:len(e.raw)/2]
	got := e.object(codecFor(t))
	if got.GetName() != "c" || got.GetUID() != "u" || got.Object["data"] != nil {
		t.Fatalf("a corrupt stored form read back as %v, want the lean stand-in", got.Object)
	}
}
