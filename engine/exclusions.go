package engine

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/resource"
)

// splitExcluded separates the desired objects whose kind the cache filter
// excludes: the cache never watches them, so comparing them would report
// them missing forever and syncing them would write blind.
// Keys of namespaced objects without a namespace get the app's destination
// namespace, where a sync would have put them.
func (e *Engine) splitExcluded(app *Application, cs *clusterState, objs []*unstructured.Unstructured) (kept []*unstructured.Unstructured, excluded []resource.Key) {
	f := e.opts.Cache.Filter
	if len(f.Include) == 0 && len(f.Exclude) == 0 {
		return objs, nil
	}
	server := ""
	if cs != nil {
		server = cs.Server()
	}
	kept = objs[:0:0]
	for _, o := range objs {
		if f.AllowsOn(resource.GroupKindOf(o), server) {
			kept = append(kept, o)
		} else {
			k := resource.KeyOf(o)
			if k.Namespace == "" {
				namespaced, known := true, false
				if cs != nil && cs.Cache() != nil {
					namespaced, known = cs.IsNamespaced(k.GroupKind())
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

// excludedCondition names the excluded objects, or is nil when none is.
func excludedCondition(keys []resource.Key) *Condition {
	if len(keys) == 0 {
		return nil
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.String()
	}
	return &Condition{Type: ConditionExcludedResource, Message: fmt.Sprintf(
		"%d resource(s) of excluded kinds are neither compared nor synced: %s", len(keys), strings.Join(names, ", "))}
}
