package cache

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// IsLean reports whether obj is the stand-in ClusterCache.Get returns for
// an object the cache keeps lean (the populate hook did not ask for it
// whole): apiVersion, kind and the metadata the indexes need (name,
// namespace, uid, resourceVersion, labels, ownerReferences), nothing else.
// Such a stand-in has no creationTimestamp, which every object the API
// server returns carries; that is how it is told. A consumer that needs
// the whole object (to compare it with a desired one, to judge its health)
// reads it from the API server.
func IsLean(obj *unstructured.Unstructured) bool {
	if obj == nil {
		return false
	}
	meta, _ := obj.Object["metadata"].(map[string]any)
	_, stamped := meta["creationTimestamp"]
	return !stamped
}
