package desired

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubegitops/gitops/resource"
)

// BuiltinScope answers, for a destination with no discovery to ask (an
// offline one), the scope of the built-in kinds client-go's scheme knows:
// cluster-scoped when resource.BuiltinClusterScoped says so, namespaced
// otherwise. Other kinds (custom resources) are unknown: a CRD of the same
// render may still settle them, else they are left as rendered. With it an
// offline Render gives namespaced built-in objects the destination's
// namespace, as a render for a connected cluster does.
func BuiltinScope(gk schema.GroupKind) (namespaced, known bool) {
	for _, v := range scheme.Scheme.VersionsForGroupKind(gk) {
		if scheme.Scheme.Recognizes(v.WithKind(gk.Kind)) {
			return !resource.BuiltinClusterScoped(gk.Kind), true
		}
	}
	return false, false
}
