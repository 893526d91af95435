package clusters

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// discoveryStub is a host's cache that serves lists as its discovery.
type discoveryStub struct {
	Cache
	lists []metav1.APIResourceList
}

func (s *discoveryStub) APIResources() []metav1.APIResourceList { return s.lists }

// countedStub is one that counts its discoveries, as *cache.ClusterCache.
type countedStub struct {
	*discoveryStub
	gen uint64
}

func (c *countedStub) APIResourcesGeneration() uint64 { return c.gen }

func crontabs(namespaced bool) []metav1.APIResourceList {
	return []metav1.APIResourceList{{GroupVersion: "stable.example.com/v1",
		APIResources: []metav1.APIResource{{Name: "crontabs", Kind: "CronTab", Namespaced: namespaced}}}}
}

// TestDiscoveryIsReadOncePerGeneration: with a cache that counts its
// discoveries, scopes and Helm's API versions are built once per
// discovery and rebuilt at the next; with one that does not, every call
// reads its API resources afresh, so a change of scope that keeps the
// number of resources is seen at once.
func TestDiscoveryIsReadOncePerGeneration(t *testing.T) {
	gk := schema.GroupKind{Group: "stable.example.com", Kind: "CronTab"}

	plain := &discoveryStub{lists: crontabs(true)}
	cs := NewConnected(Config{}, plain)
	if ns, known := cs.IsNamespaced(gk); !ns || !known {
		t.Fatalf("uncounted: namespaced %v known %v, want both", ns, known)
	}
	plain.lists = crontabs(false)
	if ns, known := cs.IsNamespaced(gk); ns || !known {
		t.Fatalf("uncounted: after the scope changed, namespaced %v known %v", ns, known)
	}
	if _, known := cs.IsNamespaced(schema.GroupKind{Kind: "Nothing"}); known {
		t.Fatal("uncounted: a kind the cluster does not serve is known")
	}

	counted := &countedStub{discoveryStub: &discoveryStub{lists: crontabs(true)}, gen: 1}
	cs = NewConnected(Config{}, counted)
	if ns, _ := cs.IsNamespaced(gk); !ns {
		t.Fatal("counted: CronTab is not namespaced")
	}
	first := cs.APIVersions()
	if !slices.Contains(first, "stable.example.com/v1/CronTab") || !slices.Contains(first, "stable.example.com/v1") {
		t.Fatalf("counted: API versions %v", first)
	}
	counted.lists = append(crontabs(false), metav1.APIResourceList{GroupVersion: "v1",
		APIResources: []metav1.APIResource{{Name: "configmaps", Kind: "ConfigMap", Namespaced: true}}})
	if ns, _ := cs.IsNamespaced(gk); !ns {
		t.Fatal("counted: the scope was rebuilt within one discovery")
	}
	if again := cs.APIVersions(); &again[0] != &first[0] {
		t.Fatal("counted: the API versions were rebuilt within one discovery")
	}
	counted.gen++
	if ns, _ := cs.IsNamespaced(gk); ns {
		t.Fatal("counted: the next discovery's scope was not read")
	}
	if next := cs.APIVersions(); !slices.Contains(next, "v1/ConfigMap") {
		t.Fatalf("counted: the next discovery's API versions were not read: %v", next)
	}
}
