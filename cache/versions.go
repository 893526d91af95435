package cache

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubegitops/gitops/resource"
)

// Version is one cached object's identity and version: what a consumer
// compares to learn whether the object changed, without reading it.
type Version struct {
	// Key names the object.
	Key resource.Key
	// APIVersion is the object's apiVersion as listed.
	APIVersion string
	// UID and ResourceVersion are the object's; a new UID is a new object.
	UID             types.UID
	ResourceVersion string
}

// Versions is what a consumer that only needs to know whether objects
// changed asks a cache, without decoding any object (the engine's refresh
// memo fingerprints an app's live objects with it). *ClusterCache
// implements it; a host's own Interface may, and is read whole otherwise.
type Versions interface {
	// ObjectVersion returns the version of the cached object of key.
	ObjectVersion(key resource.Key) (Version, bool)
	// ManagedVersions returns the versions of the objects app tracks, in
	// Managed's order.
	ManagedVersions(app string) []Version
}

var _ Versions = (*ClusterCache)(nil)

// ObjectVersion returns the version of the cached object of key, decoding
// nothing. Cost: O(1).
func (c *ClusterCache) ObjectVersion(key resource.Key) (Version, bool) {
	c.mu.RLock()
	e, ok := c.store.byKey[key]
	c.mu.RUnlock()
	if !ok {
		return Version{}, false
	}
	return e.version(), true
}

// ManagedVersions returns the versions of the objects app tracks, sorted by
// key as Managed sorts them, decoding nothing. Cost: O(the app's objects).
func (c *ClusterCache) ManagedVersions(app string) []Version {
	c.mu.RLock()
	entries := entriesIn(c.store.byApp[app])
	c.mu.RUnlock()
	out := make([]Version, len(entries))
	for i, e := range entries {
		out[i] = e.version()
	}
	return out
}

func (e *entry) version() Version {
	return Version{Key: e.key, APIVersion: e.apiVersion, UID: e.uid, ResourceVersion: e.resourceVersion}
}
