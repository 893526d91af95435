package resource

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func newObj(apiVersion, kind, ns, name string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetAPIVersion(apiVersion)
	o.SetKind(kind)
	o.SetNamespace(ns)
	o.SetName(name)
	return o
}

func TestTrackingIDRoundTrip(t *testing.T) {
	for s, want := range map[string]TrackingID{
		"shop:apps/Deployment:web/frontend":                           {App: "shop", Key: Key{Group: "apps", Kind: "Deployment", Namespace: "web", Name: "frontend"}},
		"shop:/Namespace:/web":                                        {App: "shop", Key: Key{Kind: "Namespace", Name: "web"}},
		"argocd_shop:rbac.authorization.k8s.io/ClusterRole:/system:x": {App: "argocd_shop", Key: Key{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:x"}},
	} {
		got, err := ParseTrackingID(s)
		if err != nil {
			t.Fatalf("ParseTrackingID(%q): %v", s, err)
		}
		if got != want {
			t.Errorf("ParseTrackingID(%q) = %#v", s, got)
		}
		if got.String() != s {
			t.Errorf("String() = %q, want %q", got.String(), s)
		}
	}
}

func TestParseTrackingIDRejects(t *testing.T) {
	for _, s := range []string{"", "shop", ":apps/Deployment:web/x", "shop:Deployment:web/x", "shop:apps/Deployment", "shop:apps/Deployment:web", "shop:apps/:web/x", "shop:apps/Deployment:web/"} {
		if _, err := ParseTrackingID(s); err == nil {
			t.Errorf("ParseTrackingID(%q) accepted", s)
		}
	}
}

func TestTrackingOwnership(t *testing.T) {
	tr := DefaultTracking()
	dep := newObj("apps/v1", "Deployment", "web", "frontend")
	if err := tr.Set(dep, "shop"); err != nil {
		t.Fatal(err)
	}
	if got := dep.GetAnnotations()[AnnotationTrackingID]; got != "shop:apps/Deployment:web/frontend" {
		t.Fatalf("annotation = %q", got)
	}
	if !tr.OwnedBy(dep, "shop") || tr.OwnedBy(dep, "other") || tr.OwnedBy(dep, "") {
		t.Fatal("ownership wrong")
	}

	// A ReplicaSet that inherited the Deployment's annotations is a copy.
	rs := newObj("apps/v1", "ReplicaSet", "web", "frontend-abc")
	rs.SetAnnotations(dep.GetAnnotations())
	if tr.AppOf(rs) != "" {
		t.Fatal("copied annotation claimed")
	}

	// Another instance never claims it, and it never claims another's.
	other := tr
	other.InstanceID = "blue"
	if other.OwnedBy(dep, "shop") {
		t.Fatal("instance blue claimed the default instance's object")
	}
	blueObj := newObj("v1", "ConfigMap", "web", "c")
	if err := other.Set(blueObj, "shop"); err != nil {
		t.Fatal(err)
	}
	if blueObj.GetAnnotations()[AnnotationInstance] != "blue" {
		t.Fatal("instance not written")
	}
	if tr.OwnedBy(blueObj, "shop") || !other.OwnedBy(blueObj, "shop") {
		t.Fatal("instance check wrong")
	}

	// Argo CD's key can be used instead.
	argo := Tracking{AnnotationKey: AnnotationArgoTrackingID}
	cm := newObj("v1", "ConfigMap", "web", "c")
	if err := argo.Set(cm, "shop"); err != nil {
		t.Fatal(err)
	}
	if cm.GetAnnotations()[AnnotationArgoTrackingID] != "shop:/ConfigMap:web/c" || !argo.OwnedBy(cm, "shop") {
		t.Fatalf("argo tracking: %v", cm.GetAnnotations())
	}

	if err := tr.Set(newObj("v1", "ConfigMap", "web", "c"), "bad:name"); err == nil {
		t.Fatal("app name with a colon accepted")
	}
}

func TestTrackingMethods(t *testing.T) {
	obj := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("apps/v1")
		u.SetKind("ReplicaSet")
		u.SetNamespace("web")
		u.SetName("api")
		return u
	}
	label := DefaultTracking()
	label.Method = TrackingLabel
	o := obj()
	if err := label.Set(o, "shop"); err != nil {
		t.Fatal(err)
	}
	if o.GetLabels()[DefaultTrackingLabel] != "shop" || o.GetAnnotations()[AnnotationTrackingID] != "" {
		t.Fatalf("label method wrote labels %v annotations %v", o.GetLabels(), o.GetAnnotations())
	}
	if label.AppOf(o) != "shop" || !label.OwnedBy(o, "shop") {
		t.Fatal("a labelled object is not managed")
	}
	yes := true
	o.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "api", UID: "u", Controller: &yes}})
	if label.AppOf(o) != "" {
		t.Fatal("a controller's copy of the label is taken for a managed object")
	}
	if err := label.Set(obj(), strings.Repeat("a", 64)); err == nil {
		t.Fatal("a 64-character app name became a label")
	}

	both := DefaultTracking()
	both.Method = TrackingAnnotationAndLabel
	o = obj()
	long := strings.Repeat("b", 70)
	if err := both.Set(o, long); err != nil {
		t.Fatal(err)
	}
	if got := o.GetLabels()[DefaultTrackingLabel]; got != long[:63] {
		t.Fatalf("annotation+label wrote label %q", got)
	}
	if both.AppOf(o) != long {
		t.Fatalf("annotation+label: owner %q, want the annotation's app", both.AppOf(o))
	}

	argo := TrackingArgoCD()
	o = obj()
	o.SetAnnotations(map[string]string{AnnotationArgoTrackingID: "shop:apps/ReplicaSet:web/api"})
	if argo.AppOf(o) != "shop" {
		t.Fatal("TrackingArgoCD does not adopt an object Argo CD tracks")
	}
	if err := (Tracking{Method: "labels"}).Validate(); err == nil {
		t.Fatal("an unknown method was accepted")
	}
}
