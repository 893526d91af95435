package project

import (
	"path"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ClusterResourceListed reports whether a cluster-scoped object of kind gk
// named name matches an entry of an AppProject's clusterResourceWhitelist
// or clusterResourceBlacklist, as Argo CD's IsGroupKindNamePermitted reads
// them: the entry's group and kind match (globs, as Glob), and its name is
// empty or matches name as a glob of Go's path.Match syntax ("team1-*",
// "kube-?", "[a-c]*"; "*" does not cross a "/", which cluster-scoped names
// never hold). A name pattern path.Match cannot read matches nothing
// (AppProject.Validate refuses it).
func ClusterResourceListed(list []v1alpha1.ClusterResourceRestrictionItem, gk schema.GroupKind, name string) bool {
	for _, it := range list {
		if !Glob(it.Group, gk.Group) || !Glob(it.Kind, gk.Kind) {
			continue
		}
		if it.Name == "" {
			return true
		}
		if ok, err := path.Match(it.Name, name); ok && err == nil {
			return true
		}
	}
	return false
}
