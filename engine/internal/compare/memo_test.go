package compare

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/resource"
)

// objectCache is a Cache that serves objects only.
type objectCache struct {
	objs map[resource.Key]*unstructured.Unstructured
}

func (c objectCache) Get(key resource.Key) (*unstructured.Unstructured, bool) {
	o, ok := c.objs[key]
	return o, ok
}

func (c objectCache) Managed(app string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, k := range []string{"a", "b"} {
		if o, ok := c.objs[resource.Key{Kind: "ConfigMap", Namespace: "ns", Name: k}]; ok {
			out = append(out, o)
		}
	}
	return out
}

func (objectCache) Namespace(string) []resource.Key            { return nil }
func (objectCache) Tainted() map[schema.GroupVersionKind]error { return nil }

// versionedCache also tells versions without objects, as
// cache.ClusterCache does; its Get and Managed fail the test if the
// fingerprint uses them.
type versionedCache struct {
	objectCache
	t *testing.T
}

func (c versionedCache) Get(key resource.Key) (*unstructured.Unstructured, bool) {
	c.t.Error("the fingerprint decoded an object (Get) of a cache that tells versions")
	return c.objectCache.Get(key)
}

func (c versionedCache) Managed(app string) []*unstructured.Unstructured {
	c.t.Error("the fingerprint decoded objects (Managed) of a cache that tells versions")
	return c.objectCache.Managed(app)
}

func (c versionedCache) Version(key resource.Key) (cache.ObjectVersion, bool) {
	o, ok := c.objectCache.Get(key)
	if !ok {
		return cache.ObjectVersion{}, false
	}
	return cache.ObjectVersion{Key: key, APIVersion: o.GetAPIVersion(), UID: o.GetUID(), ResourceVersion: o.GetResourceVersion()}, true
}

func (c versionedCache) ManagedVersions(app string) []cache.ObjectVersion {
	var out []cache.ObjectVersion
	for _, o := range c.objectCache.Managed(app) {
		out = append(out, cache.ObjectVersion{Key: resource.KeyOf(o), APIVersion: o.GetAPIVersion(), UID: o.GetUID(), ResourceVersion: o.GetResourceVersion()})
	}
	return out
}

func cm(name, rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "ns", "uid": "uid-" + name, "resourceVersion": rv}}}
	return u
}

// TestFingerprintFromVersionsEqualsFromObjects: the live fingerprint read
// from versions alone (a cache that keeps whole objects as JSON) is the
// one read from the objects, which Compare keeps with a memo; and it moves
// when a version moves.
func TestFingerprintFromVersionsEqualsFromObjects(t *testing.T) {
	c := New(Config{})
	objs := map[resource.Key]*unstructured.Unstructured{}
	for _, n := range []string{"a", "b"} {
		objs[resource.Key{Kind: "ConfigMap", Namespace: "ns", Name: n}] = cm(n, "1")
	}
	keys := []health.ResourceHealth{
		{Key: resource.Key{Kind: "ConfigMap", Namespace: "ns", Name: "a"}},
		{Key: resource.Key{Kind: "ConfigMap", Namespace: "ns", Name: "absent"}},
	}
	plain := objectCache{objs: objs}
	fromObjects := c.liveFingerprint(plain, "app", keys)
	if got := c.liveFingerprint(versionedCache{objectCache: plain, t: t}, "app", keys); got != fromObjects {
		t.Fatalf("fingerprint from versions %x, from objects %x", got, fromObjects)
	}
	objs[resource.Key{Kind: "ConfigMap", Namespace: "ns", Name: "b"}] = cm("b", "2")
	if got := c.liveFingerprint(versionedCache{objectCache: plain, t: t}, "app", keys); got == fromObjects {
		t.Error("a managed object's new version left the fingerprint as it was")
	}
}
