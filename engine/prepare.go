package engine

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// servedScope is the cluster's answer to "is this kind namespaced", or nil
// for an offline (or not yet connected) destination.
func (cs *clusterState) servedScope() func(schema.GroupKind) (namespaced, known bool) {
	if cs == nil || cs.cache == nil {
		return nil
	}
	return cs.isNamespaced
}
