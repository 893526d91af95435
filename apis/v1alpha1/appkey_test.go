package v1alpha1

import "testing"

// TestAppKeyTellsNamespacesApart: two apps named web in two namespaces
// have two keys, written as Argo CD's qualified names.
func TestAppKeyTellsNamespacesApart(t *testing.T) {
	a, b := &Application{}, &Application{}
	a.Namespace, a.Name = "team-a", "web"
	b.Namespace, b.Name = "team-b", "web"
	ka, kb := KeyOf(a), KeyOf(b)
	if ka == kb || ka.String() != "team-a/web" || kb.String() != "team-b/web" {
		t.Fatalf("keys %v and %v", ka, kb)
	}
	if got := (AppKey{Name: "web"}).String(); got != "web" {
		t.Fatalf("key without namespace = %q, want web", got)
	}
}
