package cache

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegitops/gitops/resource"
)

// Interface is what a consumer of a cluster's live state (the engine, its
// clusters part) needs of a cache; *ClusterCache implements it, and a
// host may put its own behind the engine's Options.NewClusterCache.
type Interface interface {
	// Start lists and watches until ctx ends.
	Start(ctx context.Context) error
	// WaitForSync blocks until the first listing is done, or ctx ends.
	WaitForSync(ctx context.Context) error
	// Stop ends the watches.
	Stop()
	// Get returns the cached object of key.
	Get(key resource.Key) (*unstructured.Unstructured, bool)
	// Managed returns the objects an app's tracking id names.
	Managed(app string) []*unstructured.Unstructured
	// Namespace returns the keys of the cached objects of a namespace.
	Namespace(ns string) []resource.Key
	// Tainted returns the kinds that cannot be served, with why.
	Tainted() map[schema.GroupVersionKind]error
	// APIResources and ServerVersion describe the cluster for renderers.
	APIResources() []metav1.APIResourceList
	ServerVersion() string
	// Subscribe calls fn with changes until unsubscribed.
	Subscribe(fn func(Event)) (unsubscribe func())
}

var _ Interface = (*ClusterCache)(nil)
