package cache

import (
	"reflect"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubegitops/gitops/resource"
)

func TestDefaultFilterExcludesChurningKinds(t *testing.T) {
	f := DefaultOptions().Filter
	for _, gk := range []schema.GroupKind{
		{Kind: "Event"}, {Group: "events.k8s.io", Kind: "Event"}, {Group: "coordination.k8s.io", Kind: "Lease"},
		{Group: "metrics.k8s.io", Kind: "PodMetrics"}, {Kind: "ComponentStatus"},
	} {
		if f.Allows(gk) {
			t.Errorf("%v allowed by default", gk)
		}
	}
	for _, gk := range []schema.GroupKind{{Kind: "ConfigMap"}, {Group: "apps", Kind: "Deployment"}, {Group: "coordination.k8s.io", Kind: "LeaseCandidate"}} {
		if !f.Allows(gk) {
			t.Errorf("%v excluded by default", gk)
		}
	}
	inc := ResourceFilter{Include: []GroupKindMatch{{Group: "apps", Kind: "*"}}, Exclude: []GroupKindMatch{{Group: "apps", Kind: "ReplicaSet"}}}
	if !inc.Allows(schema.GroupKind{Group: "apps", Kind: "Deployment"}) || inc.Allows(schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}) || inc.Allows(schema.GroupKind{Kind: "Pod"}) {
		t.Error("include/exclude rules not applied")
	}
}

func obj(apiVersion, kind, ns, name string, uid string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name}}}
	if ns != "" {
		u.SetNamespace(ns)
	}
	u.SetUID(types.UID(uid))
	return u
}

func ownedBy(u *unstructured.Unstructured, owners ...*unstructured.Unstructured) *unstructured.Unstructured {
	var refs []any
	for _, o := range owners {
		refs = append(refs, map[string]any{"apiVersion": o.GetAPIVersion(), "kind": o.GetKind(), "name": o.GetName(), "uid": string(o.GetUID())})
	}
	_ = unstructured.SetNestedSlice(u.Object, refs, "metadata", "ownerReferences")
	return u
}

func TestTrimRemovesManagedFieldsAndLastApplied(t *testing.T) {
	u := obj("v1", "ConfigMap", "ns", "a", "1")
	u.SetAnnotations(map[string]string{resource.AnnotationLastApplied: "{}", "keep": "me"})
	_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"manager": "x"}}, "metadata", "managedFields")
	trim(u, false, nil, false)
	if _, ok := u.Object["metadata"].(map[string]any)["managedFields"]; ok {
		t.Error("managedFields kept")
	}
	if want := map[string]string{"keep": "me"}; !reflect.DeepEqual(u.GetAnnotations(), want) {
		t.Errorf("annotations = %v, want %v", u.GetAnnotations(), want)
	}
	only := obj("v1", "ConfigMap", "ns", "b", "2")
	only.SetAnnotations(map[string]string{resource.AnnotationLastApplied: "{}"})
	trim(only, false, nil, false)
	if _, ok := only.Object["metadata"].(map[string]any)["annotations"]; ok {
		t.Error("empty annotations map left behind")
	}
}

func TestTrimKeepsOnlyTheNamedManagers(t *testing.T) {
	u := obj("v1", "ConfigMap", "ns", "a", "1")
	_ = unstructured.SetNestedSlice(u.Object, []any{
		map[string]any{"manager": "kube-controller-manager"},
		map[string]any{"manager": "gitops", "operation": "Apply"},
		map[string]any{"manager": "kubectl-edit"},
	}, "metadata", "managedFields")
	trim(u, false, []string{"gitops"}, false)
	got, _, _ := unstructured.NestedSlice(u.Object, "metadata", "managedFields")
	if len(got) != 1 || got[0].(map[string]any)["manager"] != "gitops" {
		t.Fatalf("managedFields after trim = %v, want only gitops's entry", got)
	}
	none := obj("v1", "ConfigMap", "ns", "b", "2")
	_ = unstructured.SetNestedSlice(none.Object, []any{map[string]any{"manager": "other"}}, "metadata", "managedFields")
	trim(none, false, []string{"gitops"}, false)
	if _, ok := none.Object["metadata"].(map[string]any)["managedFields"]; ok {
		t.Error("an empty managedFields list left behind")
	}
}

func TestLeanEntryKeepsIdentityOwnersAndLabels(t *testing.T) {
	owner := obj("apps/v1", "ReplicaSet", "ns", "rs", "u-rs")
	u := ownedBy(obj("v1", "Pod", "ns", "p", "u-p"), owner)
	u.SetLabels(map[string]string{"app": "web"})
	u.SetResourceVersion("42")
	_ = unstructured.SetNestedField(u.Object, "big", "spec", "payload")
	got := newEntry(u, "", nil, false).object()
	if _, ok := got.Object["spec"]; ok {
		t.Error("lean entry kept spec")
	}
	if got.GetName() != "p" || got.GetNamespace() != "ns" || got.GetUID() != "u-p" || got.GetResourceVersion() != "42" ||
		got.GetLabels()["app"] != "web" || len(got.GetOwnerReferences()) != 1 || got.GetOwnerReferences()[0].UID != "u-rs" || got.GetKind() != "Pod" {
		t.Errorf("lean object lost metadata: %v", got.Object)
	}
	e := newEntry(u, "app", nil, true)
	first, second := e.object(), e.object()
	if !equality.Semantic.DeepEqual(first.Object, u.Object) {
		t.Errorf("whole entry returned %v, want %v", first.Object, u.Object)
	}
	if first == second {
		t.Error("two reads of a whole entry share one object; each must get its own copy")
	}
	first.SetName("changed")
	if e.object().GetName() != "p" {
		t.Error("a reader's change reached the cached object")
	}
}

// TestWholeEntryDecodesIntegersAsTheClient checks that numbers come back
// as int64, as from every client, so a copy compares equal to the object
// the watch delivered (a float64 replica count would look like a diff).
func TestWholeEntryDecodesIntegersAsTheClient(t *testing.T) {
	u := obj("apps/v1", "Deployment", "ns", "d", "u-d")
	_ = unstructured.SetNestedField(u.Object, int64(3), "spec", "replicas")
	_ = unstructured.SetNestedField(u.Object, 0.5, "spec", "ratio")
	got := newEntry(u, "app", nil, true).object()
	if r, ok := got.Object["spec"].(map[string]any)["replicas"].(int64); !ok || r != 3 {
		t.Errorf("replicas decoded as %T %v, want int64 3", got.Object["spec"].(map[string]any)["replicas"], got.Object["spec"].(map[string]any)["replicas"])
	}
	if r, ok := got.Object["spec"].(map[string]any)["ratio"].(float64); !ok || r != 0.5 {
		t.Errorf("ratio decoded as %T, want float64 0.5", got.Object["spec"].(map[string]any)["ratio"])
	}
}

func TestDefaultPopulateKeepsTrackedAndCRDs(t *testing.T) {
	p := DefaultPopulate()
	if _, whole := p(obj("v1", "ConfigMap", "ns", "a", "1"), "shop"); !whole {
		t.Error("tracked object not kept whole")
	}
	if _, whole := p(obj("v1", "ConfigMap", "ns", "a", "1"), ""); whole {
		t.Error("untracked object kept whole")
	}
	if _, whole := p(obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "x.y", "1"), ""); !whole {
		t.Error("CRD not kept whole")
	}
}

func put(s *store, u *unstructured.Unstructured, app string) {
	s.put(newEntry(u, app, nil, false))
}

func TestStoreIndexesFollowPutAndRemove(t *testing.T) {
	s := newStore()
	a := obj("v1", "ConfigMap", "ns1", "a", "ua")
	b := ownedBy(obj("v1", "ConfigMap", "ns2", "b", "ub"), a)
	put(s, a, "shop")
	put(s, b, "shop")
	ka, kb := resource.KeyOf(a), resource.KeyOf(b)
	if len(s.byApp["shop"]) != 2 || len(s.byNamespace["ns1"]) != 1 || len(s.byOwner["ua"]) != 1 {
		t.Fatalf("indexes after put: app=%v ns=%v owner=%v", s.byApp, s.byNamespace, s.byOwner)
	}
	if got := s.children(ka); !reflect.DeepEqual(got, []resource.Key{kb}) {
		t.Errorf("cross-namespace children = %v", got)
	}
	// Re-putting b under another app and without its owner moves it.
	put(s, obj("v1", "ConfigMap", "ns2", "b", "ub"), "other")
	if len(s.byApp["shop"]) != 1 || len(s.byApp["other"]) != 1 || len(s.byOwner) != 0 {
		t.Errorf("indexes after update: app=%v owner=%v", s.byApp, s.byOwner)
	}
	s.remove(ka)
	s.remove(kb)
	if len(s.byKey)+len(s.byUID)+len(s.byApp)+len(s.byNamespace)+len(s.byKind)+len(s.byOwner)+len(s.byInferred) != 0 {
		t.Errorf("indexes not empty after removing everything: %+v", s)
	}
}

func TestTreeInfersParentsAndSurvivesCycles(t *testing.T) {
	s := newStore()
	svc := obj("v1", "Service", "ns", "web", "u-svc")
	ep := obj("v1", "Endpoints", "ns", "web", "u-ep")
	slice := obj("discovery.k8s.io/v1", "EndpointSlice", "ns", "web-abc", "u-es")
	slice.SetLabels(map[string]string{labelServiceName: "web"})
	sts := obj("apps/v1", "StatefulSet", "ns", "my-db", "u-sts")
	_ = unstructured.SetNestedSlice(sts.Object, []any{map[string]any{"metadata": map[string]any{"name": "data"}}}, "spec", "volumeClaimTemplates")
	pvc := obj("v1", "PersistentVolumeClaim", "ns", "data-my-db-0", "u-pvc")
	stranger := obj("v1", "PersistentVolumeClaim", "ns", "logs-my-db-0", "u-pvc2") // no such template
	// a owns b, b owns a: a cycle the API server accepts.
	a := obj("v1", "ConfigMap", "ns", "a", "u-a")
	b := ownedBy(obj("v1", "ConfigMap", "ns", "b", "u-b"), a)
	ownedBy(a, b)
	for _, u := range []*unstructured.Unstructured{svc, ep, slice, sts, pvc, stranger, a, b} {
		put(s, u, "")
	}
	if got, want := s.tree(resource.KeyOf(svc)), []resource.Key{resource.KeyOf(svc), resource.KeyOf(ep), resource.KeyOf(slice)}; !reflect.DeepEqual(got, want) {
		t.Errorf("service tree = %v, want %v", got, want)
	}
	if got, want := s.tree(resource.KeyOf(sts)), []resource.Key{resource.KeyOf(sts), resource.KeyOf(pvc)}; !reflect.DeepEqual(got, want) {
		t.Errorf("statefulset tree = %v, want %v", got, want)
	}
	if got, want := s.tree(resource.KeyOf(a)), []resource.Key{resource.KeyOf(a), resource.KeyOf(b)}; !reflect.DeepEqual(got, want) {
		t.Errorf("cycle tree = %v, want %v", got, want)
	}
	if got := s.appOf(s.byKey[resource.KeyOf(a)]); got != "" {
		t.Errorf("appOf on an untracked cycle = %q", got)
	}
}

func TestPVCCandidatesCoverEveryCut(t *testing.T) {
	got := pvcCandidates(resource.Key{Kind: "PersistentVolumeClaim", Namespace: "ns", Name: "a-b-c-12"})
	want := []inferredParent{
		{parent: resource.Key{Group: "apps", Kind: "StatefulSet", Namespace: "ns", Name: "b-c"}, template: "a"},
		{parent: resource.Key{Group: "apps", Kind: "StatefulSet", Namespace: "ns", Name: "c"}, template: "a-b"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("candidates = %v, want %v", got, want)
	}
	for _, name := range []string{"plain", "data-x", "-0", "x-0"} {
		if c := pvcCandidates(resource.Key{Name: name}); len(c) != 0 {
			t.Errorf("%q gave candidates %v", name, c)
		}
	}
}

func TestAppOfWalksToTrackedOwner(t *testing.T) {
	s := newStore()
	dep := obj("apps/v1", "Deployment", "ns", "web", "u-dep")
	rs := ownedBy(obj("apps/v1", "ReplicaSet", "ns", "web-1", "u-rs"), dep)
	pod := ownedBy(obj("v1", "Pod", "ns", "web-1-x", "u-pod"), rs)
	put(s, dep, "shop")
	put(s, rs, "")
	put(s, pod, "")
	if got := s.appOf(s.byKey[resource.KeyOf(pod)]); got != "shop" {
		t.Errorf("appOf(pod) = %q, want shop", got)
	}
}

func TestOnlyStatusChanged(t *testing.T) {
	base := func() map[string]any {
		return map[string]any{
			"spec":     map[string]any{"replicas": int64(1)},
			"status":   map[string]any{"ready": int64(0)},
			"metadata": map[string]any{"name": "x", "resourceVersion": "1", "labels": map[string]any{"a": "b"}},
		}
	}
	cur := base()
	cur["status"] = map[string]any{"ready": int64(1)}
	cur["metadata"].(map[string]any)["resourceVersion"] = "2"
	cur["metadata"].(map[string]any)["managedFields"] = []any{}
	if !onlyStatusChanged(base(), cur) {
		t.Error("status/resourceVersion/managedFields change not recognised")
	}
	spec := base()
	spec["spec"] = map[string]any{"replicas": int64(2)}
	if onlyStatusChanged(base(), spec) {
		t.Error("spec change taken for status only")
	}
	label := base()
	label["metadata"].(map[string]any)["labels"] = map[string]any{"a": "c"}
	if onlyStatusChanged(base(), label) {
		t.Error("label change taken for status only")
	}
	gone := base()
	delete(gone, "spec")
	if onlyStatusChanged(base(), gone) {
		t.Error("removed spec taken for status only")
	}
}

func TestBatcherCoalescesPerKey(t *testing.T) {
	b := newBatcher(time.Hour)
	var mu sync.Mutex
	var got []Event
	unsub := b.subscribe(func(e Event) { mu.Lock(); got = append(got, e); mu.Unlock() })
	k := func(n string) resource.Key { return resource.Key{Kind: "ConfigMap", Namespace: "ns", Name: n} }
	b.add(Event{Type: EventAdded, Key: k("a")})
	b.add(Event{Type: EventModified, Key: k("a")}) // -> Added
	b.add(Event{Type: EventAdded, Key: k("b")})
	b.add(Event{Type: EventDeleted, Key: k("b")}) // -> nothing
	b.add(Event{Type: EventDeleted, Key: k("c")})
	b.add(Event{Type: EventAdded, Key: k("c")}) // -> Modified
	b.add(Event{Type: EventModified, Key: k("d")})
	b.flush()
	want := []Event{{Type: EventAdded, Key: k("a")}, {Type: EventModified, Key: k("c")}, {Type: EventModified, Key: k("d")}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("delivered %v, want %v", got, want)
	}
	unsub()
	got = nil
	b.add(Event{Type: EventAdded, Key: k("e")})
	b.flush()
	if len(got) != 0 || b.active() {
		t.Errorf("delivered after unsubscribe: %v", got)
	}
}

func TestKindErrorNamesKindAndCause(t *testing.T) {
	e := &KindError{GVK: schema.GroupVersionKind{Group: "x.io", Version: "v2", Kind: "Widget"}, Namespace: "ns", Reason: ReasonListFailed, Err: errBoom}
	if got, want := e.Error(), "cache: x.io/v2/Widget in namespace ns: ListFailed: boom"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if e.Unwrap() != errBoom {
		t.Error("Unwrap lost the cause")
	}
}

var errBoom = &boomError{}

type boomError struct{}

func (*boomError) Error() string { return "boom" }
