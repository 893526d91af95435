package engine

import (
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/sync"
)

// settleScopes decides, once per render and for refresh and sync alike,
// the scope of each rendered object (sync.Scope: the cluster's RESTMapper
// first, then the CRDs of the same render) and gives it the namespace that
// scope calls for (sync.SettleNamespace). An object whose kind neither
// knows, or a namespaced one without a namespace when the app names no
// destination namespace, is left as rendered: the sync refuses it by name,
// and a refresh reports it.
//
// Objects are never modified: a settled object is a copy sharing all but
// its metadata with the rendered one (renders are cached).
func (e *Engine) settleScopes(app *Application, cs *clusterState, objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	crds := sync.CRDScopes(objs)
	served := cs.ServedScope()
	destNS := app.Spec.Destination.Namespace
	for i, obj := range objs {
		namespaced, from := sync.Scope(obj.GroupVersionKind().GroupKind(), served, crds)
		if from == sync.ScopeUnknown {
			continue
		}
		ns := obj.GetNamespace()
		if (namespaced && ns != "") || (namespaced && destNS == "") || (!namespaced && ns == "") {
			continue
		}
		cp := &unstructured.Unstructured{Object: maps.Clone(obj.Object)}
		if meta, ok := obj.Object["metadata"].(map[string]any); ok {
			cp.Object["metadata"] = maps.Clone(meta)
		}
		_ = sync.SettleNamespace(cp, namespaced, destNS) // destNS is set when it is needed
		objs[i] = cp
	}
	return objs
}
