package compare

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/resource"
)

// SharedOwners finds the desired objects of app (whose key is appKey)
// whose live counterpart another app tracks (Argo CD's
// FailOnSharedResource check): each such object's key and the other app,
// or nil when there are none.
func (c *Comparer) SharedOwners(app *v1alpha1.Application, appKey string, dest Destination, desired []*unstructured.Unstructured) map[resource.Key]string {
	var owners map[resource.Key]string
	for _, obj := range desired {
		key := resource.KeyOf(obj)
		if key.Namespace == "" {
			namespaced, known := false, false
			if dest.Scope != nil {
				namespaced, known = dest.Scope(key.GroupKind())
			}
			if !known || namespaced {
				key.Namespace = app.Spec.Destination.Namespace
			}
		}
		live, ok := dest.Cache.Get(key)
		if !ok {
			continue
		}
		if other := c.cfg.Tracking.AppOf(live); other != "" && other != appKey {
			if owners == nil {
				owners = map[resource.Key]string{}
			}
			owners[key] = other
		}
	}
	return owners
}
