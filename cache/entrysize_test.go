package cache

import (
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
	e := newEntry(obj("pod-uid", "1"), "", nil, false)
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
	update := newEntry(obj("pod-uid", "2"), "", nil, false)
	s.put(update)
	if unsafe.StringData(update.key.Name) != unsafe.StringData(e.key.Name) || &update.owners[0] != &e.owners[0] {
		t.Fatal("an update of the same object does not keep the first version's strings")
	}
	if update.resourceVersion != "2" || s.byKey[update.key] != update || s.byUID["pod-uid"] != update {
		t.Fatalf("the update is not the stored entry: %+v", update)
	}
	recreated := newEntry(obj("new-uid", "3"), "", nil, false)
	s.put(recreated)
	if unsafe.StringData(recreated.key.Name) == unsafe.StringData(e.key.Name) || recreated.uid != "new-uid" || s.byUID["new-uid"] != recreated {
		t.Fatal("an object recreated under the same name shares the old one's strings")
	}
}
