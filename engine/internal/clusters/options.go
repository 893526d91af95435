package clusters

import (
	"k8s.io/client-go/rest"

	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/sync"
)

// conf is what a Set connects its clusters with: its settings and
// collaborators, replaced together by Reconfigure.
type conf struct {
	settings Settings
	with     Collaborators
}

// cacheOptions are cluster cs's cache settings: the Set's, with the
// cluster's name and server when they leave them unset, and the cluster's
// own namespaces (its Secret's), which are narrower than any the host set
// for every cluster.
func (c *conf) cacheOptions(cs *Cluster) cache.Options {
	opts := c.settings.Cache
	if opts.Name == "" {
		opts.Name = cs.cfg.Name
	}
	if opts.Server == "" {
		opts.Server = cs.Server()
	}
	if len(cs.cfg.Namespaces) > 0 {
		opts.Namespaces, opts.ClusterKinds = cs.cfg.Namespaces, nil
		if cs.cfg.ClusterResources {
			opts.ClusterKinds = []cache.GroupKindMatch{{Group: "*", Kind: "*"}}
		}
	}
	return opts
}

// syncCollaborators are the collaborators of every syncer of cluster cs
// (its own and those that impersonate a service account): the Set's, with
// the app's live objects, the waits and the absent objects of a first sync
// answered from the cluster's cache.
func (c *conf) syncCollaborators(cs *Cluster) sync.Collaborators {
	with := c.with.Sync
	with.ManagedObjects = cs.managed
	with.Live = cs.live
	with.Absent = cs.absent
	return with
}

// ClientConfig is the client configuration of cluster cs with the Set's
// rate limits.
func (s *Set) ClientConfig(cs *Cluster) *rest.Config {
	return s.conf.Load().clientConfig(cs)
}

func (c *conf) clientConfig(cs *Cluster) *rest.Config {
	cfg := rest.CopyConfig(cs.cfg.Config)
	cfg.QPS, cfg.Burst = c.settings.QPS, c.settings.Burst
	return cfg
}
