package engine

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegitops/gitops/engine/internal/compare"
	"github.com/kubegitops/gitops/engine/internal/desired"
)

// desiredView is what the desired-state part needs of the destination: its
// server, versions and scopes (for an offline destination, the versions of
// its ClusterConfig and no scopes).
func (cs *clusterState) desiredView() desired.Destination {
	d := desired.Destination{Server: cs.server(), Scope: cs.servedScope()}
	if cs.cache != nil {
		d.KubeVersion, d.APIVersions = cs.cache.ServerVersion(), apiVersions(cs)
	} else {
		d.KubeVersion, d.APIVersions = cs.cfg.KubeVersion, cs.cfg.APIVersions
	}
	return d
}

// compareView is what the comparison part needs of the connected
// destination: its cache, scopes, namespaced mode, discovery, schema and
// dry-runner, and an ID of this connection (a differ is kept per ID).
func (cs *clusterState) compareView() compare.Destination {
	d := compare.Destination{Name: cs.cfg.Name, ID: fmt.Sprintf("%s\x00%p", cs.cfg.Name, cs), Scope: cs.servedScope(),
		Manages: cs.manages, Discovery: cs.discoveryGeneration, Schema: cs.schema, DryRun: cs.dryRun}
	if cs.cache != nil {
		d.Cache = cs.cache
	}
	return d
}

// apiVersions lists "group/version" and "group/version/Kind" for every
// resource the cluster serves, as Helm's .Capabilities.APIVersions wants.
// The list is built once per discovery (see discoveryGeneration: every
// render asked for it, and copying and sorting the cluster's resources was
// 7% of a 10,000-app fleet's cold start); callers share it and must not
// change it.
func apiVersions(cs *clusterState) []string {
	gen, counted := cs.discoveryGeneration()
	if !counted {
		return buildAPIVersions(cs.cache.APIResources())
	}
	cs.scopeMu.Lock()
	defer cs.scopeMu.Unlock()
	if cs.apiVersions == nil || cs.apiVersionsGen != gen {
		cs.apiVersions, cs.apiVersionsGen = buildAPIVersions(cs.cache.APIResources()), gen
	}
	return cs.apiVersions
}

func buildAPIVersions(lists []metav1.APIResourceList) []string {
	set := map[string]bool{}
	for _, l := range lists {
		set[l.GroupVersion] = true
		for _, r := range l.APIResources {
			if !strings.Contains(r.Name, "/") {
				set[l.GroupVersion+"/"+r.Kind] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	sort.Strings(out)
	return slices.Clip(out)
}
