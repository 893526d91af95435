package desired

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/resource"
)

// splitExcluded separates the desired objects whose kind the cache filter
// excludes: the cache never watches them, so comparing them would report
// them missing forever and syncing them would write blind.
// Keys of namespaced objects without a namespace get the app's destination
// namespace, where a sync would have put them.
func splitExcluded(f cache.ResourceFilter, app *v1alpha1.Application, dest Destination, objs []*unstructured.Unstructured) (kept []*unstructured.Unstructured, excluded []resource.Key) {
	if len(f.Include) == 0 && len(f.Exclude) == 0 {
		return objs, nil
	}
	kept = objs[:0:0]
	for _, o := range objs {
		if f.AllowsOn(resource.GroupKindOf(o), dest.Server) {
			kept = append(kept, o)
		} else {
			k := resource.KeyOf(o)
			if k.Namespace == "" {
				namespaced, known := true, false
				if dest.Scope != nil {
					namespaced, known = dest.Scope(k.GroupKind())
				}
				if namespaced || !known {
					k.Namespace = app.Spec.Destination.Namespace
				}
			}
			excluded = append(excluded, k)
		}
	}
	return kept, excluded
}

// SplitExcluded is the split Build makes of objs (the Builder's cache
// filter, Config.Filter) for app at dest: the objects it keeps, and the keys
// of those it leaves out.
func (b *Builder) SplitExcluded(app *v1alpha1.Application, dest Destination, objs []*unstructured.Unstructured) (kept []*unstructured.Unstructured, excluded []resource.Key) {
	return splitExcluded(b.cfg.Filter, app, dest, objs)
}

// ExcludedCondition names the excluded objects, or is nil when none is.
func ExcludedCondition(keys []resource.Key) *appstatus.Condition {
	if len(keys) == 0 {
		return nil
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.String()
	}
	return &appstatus.Condition{Type: appstatus.ConditionExcludedResource, Message: fmt.Sprintf(
		"%d resource(s) of excluded kinds are neither compared nor synced: %s", len(keys), strings.Join(names, ", "))}
}
