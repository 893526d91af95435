package engine

import (
	"fmt"

	"github.com/kubegitops/gitops/engine/internal/compare"
	"github.com/kubegitops/gitops/engine/internal/desired"
)

// desiredView is what the desired-state part needs of the destination cs:
// its server, versions and scopes (for an offline destination, the
// versions of its ClusterConfig and the built-in kinds' scopes).
func desiredView(cs *clusterState) desired.Destination {
	d := desired.Destination{Server: cs.Server(), Scope: cs.ServedScope()}
	if cs.Cache() != nil {
		d.KubeVersion, d.APIVersions = cs.Cache().ServerVersion(), cs.APIVersions()
	} else {
		cfg := cs.Config()
		d.KubeVersion, d.APIVersions = cfg.KubeVersion, cfg.APIVersions
		d.Scope = desired.BuiltinScope
	}
	return d
}

// compareView is compareViewOf(cs), made once per connected cluster and
// then shared: a refresh asks for it every time, and building it allocates
// (the ID, the method values). A cluster not yet connected is not kept, so
// its view is made again once it is.
func (e *Engine) compareView(cs *clusterState) compare.Destination {
	if v, ok := e.views.Load(cs); ok {
		return v.(compare.Destination)
	}
	d := compareViewOf(cs)
	if d.Cache != nil {
		e.views.Store(cs, d)
	}
	return d
}

// compareViewOf is what the comparison part needs of the connected
// destination cs: its cache, scopes, namespaced mode, discovery, schema
// and dry-runner, and an ID of this connection (a differ is kept per ID).
func compareViewOf(cs *clusterState) compare.Destination {
	d := compare.Destination{Name: cs.Name(), Server: cs.Server(), ID: fmt.Sprintf("%s\x00%p", cs.Name(), cs), Scope: cs.ServedScope(),
		Manages: cs.Manages, Discovery: cs.DiscoveryGeneration, Schema: cs.Schema(), DryRun: cs.DryRun()}
	if c := cs.Cache(); c != nil {
		d.Cache, d.Fetch = c, cs.Fetch
	}
	return d
}
