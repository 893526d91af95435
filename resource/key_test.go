package resource

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestKeyStringRoundTrip(t *testing.T) {
	cases := map[Key]string{
		{Group: "apps", Kind: "Deployment", Namespace: "web", Name: "frontend"}:               "apps/Deployment web/frontend",
		{Kind: "ConfigMap", Namespace: "web", Name: "settings"}:                               "ConfigMap web/settings",
		{Kind: "Namespace", Name: "web"}:                                                      "Namespace web",
		{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:aggregate-x"}: "rbac.authorization.k8s.io/ClusterRole system:aggregate-x",
	}
	for key, want := range cases {
		if got := key.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
		back, err := ParseKey(want)
		if err != nil {
			t.Fatalf("ParseKey(%q): %v", want, err)
		}
		if back != key {
			t.Errorf("ParseKey(%q) = %#v, want %#v", want, back, key)
		}
	}
}

func TestParseKeyRejects(t *testing.T) {
	for _, s := range []string{"", "Deployment", " web/x", "Deployment ", "apps/Deployment a/b/c", "a/b/C x", "Deployment a b"} {
		if _, err := ParseKey(s); err == nil {
			t.Errorf("ParseKey(%q) accepted", s)
		}
	}
}

func TestKeyOf(t *testing.T) {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("apps/v1")
	obj.SetKind("Deployment")
	obj.SetNamespace("web")
	obj.SetName("frontend")
	want := Key{Group: "apps", Kind: "Deployment", Namespace: "web", Name: "frontend"}
	if got := KeyOf(obj); got != want {
		t.Fatalf("KeyOf = %#v, want %#v", got, want)
	}
	if gk := GroupKindOf(obj); gk.String() != "Deployment.apps" {
		t.Fatalf("GroupKindOf = %v", gk)
	}
}

func TestParseGroupKind(t *testing.T) {
	for in, want := range map[string]string{
		"apps/Deployment":             "Deployment.apps",
		"Deployment.apps":             "Deployment.apps",
		"ConfigMap":                   "ConfigMap",
		"/ConfigMap":                  "ConfigMap",
		"cert-manager.io/Certificate": "Certificate.cert-manager.io",
	} {
		if got := ParseGroupKind(in).String(); got != want {
			t.Errorf("ParseGroupKind(%q) = %q, want %q", in, got, want)
		}
	}
}
