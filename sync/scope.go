package sync

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegitops/gitops/resource"
)

// CRDScopes returns the scope each CustomResourceDefinition of desired
// gives its kind (true: namespaced). A kind the cluster does not serve yet
// takes its scope from the CRD of the same desired state: its first sync
// creates the CRD, and a comparison before that must not guess.
func CRDScopes(desired []*unstructured.Unstructured) map[schema.GroupKind]bool {
	out := map[schema.GroupKind]bool{}
	for _, obj := range desired {
		if obj.GroupVersionKind().GroupKind() != gkCRD {
			continue
		}
		group, _, _ := unstructured.NestedString(obj.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(obj.Object, "spec", "names", "kind")
		scope, _, _ := unstructured.NestedString(obj.Object, "spec", "scope")
		out[schema.GroupKind{Group: group, Kind: kind}] = scope != "Cluster"
	}
	return out
}

// ScopeSource says where a Scope decision came from.
type ScopeSource string

// Scope sources.
const (
	// ScopeFromCluster: the cluster serves the kind (its RESTMapper or
	// discovery).
	ScopeFromCluster ScopeSource = "cluster"
	// ScopeFromCRD: a CRD of the same desired state defines the kind.
	ScopeFromCRD ScopeSource = "crd"
	// ScopeUnknown: neither; the caller decides what that means (a sync
	// refuses the object unless SkipDryRunOnMissingResource=true, a
	// refresh reports it missing).
	ScopeUnknown ScopeSource = ""
)

// Scope decides whether objects of gk are namespaced: the cluster's answer
// (served reports whether it serves gk) first, then the CRDs of the same
// desired state (CRDScopes). It is the one decision of scope, used by
// refresh and sync alike.
func Scope(gk schema.GroupKind, served func(schema.GroupKind) (namespaced, known bool), crds map[schema.GroupKind]bool) (namespaced bool, from ScopeSource) {
	if served != nil {
		if namespaced, known := served(gk); known {
			return namespaced, ScopeFromCluster
		}
	}
	if namespaced, ok := crds[gk]; ok {
		return namespaced, ScopeFromCRD
	}
	return false, ScopeUnknown
}

// SettleNamespace gives obj the namespace its scope calls for: a namespaced
// object without one gets destNS, a cluster-scoped object loses any it
// names. A namespaced object with no namespace and no destNS is an error
// naming it.
func SettleNamespace(obj *unstructured.Unstructured, namespaced bool, destNS string) error {
	if !namespaced {
		obj.SetNamespace("")
		return nil
	}
	if obj.GetNamespace() == "" {
		if destNS == "" {
			return fmt.Errorf("%s: namespaced object without a namespace, and the application names no destination namespace", resource.KeyOf(obj))
		}
		obj.SetNamespace(destNS)
	}
	return nil
}
