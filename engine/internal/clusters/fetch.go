package clusters

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegitops/gitops/resource"
)

// fetchTimeout bounds each read of a whole object from the API server.
const fetchTimeout = 30 * time.Second

// Fetch reads the whole object key of kind gvk from the API server, with
// the engine's credentials for the cluster. It serves the comparison of a
// desired object whose live object the cache keeps lean (one no app of this
// engine tracks yet, made by another writer): as Argo CD reads the full live
// object of an untracked target, the comparison sees the object as it is,
// not the cache's stand-in. An object that is gone is (nil, nil).
func (cs *Cluster) Fetch(ctx context.Context, gvk schema.GroupVersionKind, key resource.Key) (*unstructured.Unstructured, error) {
	if !cs.connected.Load() || cs.fetcher == nil {
		return nil, fmt.Errorf("cluster %s: not connected", cs.cfg.Name)
	}
	plural, namespaced, err := cs.resourceOf(gvk)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	ri := cs.fetcher.Resource(gvk.GroupVersion().WithResource(plural))
	var obj *unstructured.Unstructured
	if namespaced {
		obj, err = ri.Namespace(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	} else {
		obj, err = ri.Get(ctx, key.Name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster %s: read %s: %w", cs.cfg.Name, key, err)
	}
	return obj, nil
}

// resourceOf names the resource that serves gvk on the cluster, from the
// cache's discovery.
func (cs *Cluster) resourceOf(gvk schema.GroupVersionKind) (plural string, namespaced bool, err error) {
	gv := gvk.GroupVersion().String()
	for _, l := range cs.cache.APIResources() {
		if l.GroupVersion != gv {
			continue
		}
		for _, r := range l.APIResources {
			if r.Kind == gvk.Kind && !strings.Contains(r.Name, "/") {
				return r.Name, r.Namespaced, nil
			}
		}
	}
	return "", false, fmt.Errorf("cluster %s: the cluster serves no %s", cs.cfg.Name, gvk)
}
