package v1alpha1

import (
	"slices"
	"testing"
)

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

// TestAppKeyCompareOrdersByNamespaceThenName: keys sort by namespace
// first, a key without a namespace before any with one.
func TestAppKeyCompareOrdersByNamespaceThenName(t *testing.T) {
	keys := []AppKey{{"team-b", "a"}, {"team-a", "web"}, {"", "zz"}, {"team-a", "api"}}
	slices.SortFunc(keys, AppKey.Compare)
	want := []AppKey{{"", "zz"}, {"team-a", "api"}, {"team-a", "web"}, {"team-b", "a"}}
	if !slices.Equal(keys, want) {
		t.Fatalf("sorted %v, want %v", keys, want)
	}
	if c := (AppKey{"ns", "web"}).Compare(AppKey{"ns", "web"}); c != 0 {
		t.Fatalf("a key compared with itself = %d", c)
	}
}
