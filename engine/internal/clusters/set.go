package clusters

import (
	"context"
	"errors"
	"fmt"
	"slices"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/project"
	"github.com/kubegitops/gitops/sync"
)

// Settings are the plain configuration every cluster of a Set shares.
type Settings struct {
	// Cache are the settings of every cluster's cache; each cluster adds
	// its name, server and namespaces (see Set.cacheOptions).
	Cache cache.Options
	// Sync are the settings of every syncer.
	Sync sync.Options
	// QPS and Burst bound each cluster client.
	QPS   float32
	Burst int
	// SyncTimeout bounds the wait for a cluster's cache to list everything
	// on first use.
	SyncTimeout time.Duration
}

// Collaborators are what a Set builds its clusters' caches and syncers
// with, and what those ask or report to.
type Collaborators struct {
	// NewCache and NewSyncer build a cluster's cache and syncers.
	NewCache  NewCacheFunc
	NewSyncer NewSyncerFunc
	// Cache are every cache's collaborators.
	Cache cache.Collaborators
	// Sync are every syncer's collaborators; the Set answers
	// ManagedObjects and Live of each cluster's from its cache.
	Sync sync.Collaborators
	// Log receives the errors of caches that stop.
	Log logr.Logger
}

// Set is the engine's destinations, by name and by server URL. It is safe
// for concurrent use.
type Set struct {
	// conf holds the settings and collaborators new connections are made
	// with (Reconfigure replaces them).
	conf atomic.Pointer[conf]

	mu gosync.Mutex
	// byKey holds each cluster under its name and its server URL.
	byKey map[string]*Cluster
}

// New returns the set of clusters, none connected. It fails when a cluster
// has neither a name nor a server.
func New(settings Settings, with Collaborators, clusters []Config) (*Set, error) {
	s := &Set{byKey: map[string]*Cluster{}}
	s.conf.Store(&conf{settings: settings, with: with})
	for _, c := range clusters {
		if c.Name == "" && c.Server == "" {
			return nil, fmt.Errorf("gitops: a cluster has neither a name nor a server URL")
		}
		cs := NewCluster(c)
		for _, k := range []string{c.Name, c.Server} {
			if k != "" {
				s.byKey[k] = cs
			}
		}
	}
	return s, nil
}

// errOffline is the cause given for an offline destination.
var errOffline = errors.New("offline destination (ClusterConfig.Config is nil): it can be rendered for, not reached")

// errReplaced is the connection error of a cluster Replace replaced before
// it connected.
var errReplaced = errors.New("the cluster's configuration was replaced")

// Lookup finds the configured cluster an app names, by server URL or by
// name, without connecting to it.
func (s *Set) Lookup(dest v1alpha1.ApplicationDestination) (*Cluster, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs, ok := s.byKey[dest.Server]
	if !ok || dest.Server == "" {
		cs, ok = s.byKey[dest.Name]
	}
	if !ok {
		cluster := dest.Server
		if cluster == "" {
			cluster = dest.Name
		}
		return nil, fmt.Errorf("destination cluster %s is not a configured cluster", cluster)
	}
	return cs, nil
}

// Server is the app destination's server URL: its own, or its cluster's
// when it names the cluster ("" for a cluster not configured).
func (s *Set) Server(dest v1alpha1.ApplicationDestination) string {
	if dest.Server != "" || dest.Name == "" {
		return dest.Server
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cs, ok := s.byKey[dest.Name]; ok {
		return cs.cfg.Server
	}
	return ""
}

// All returns each configured cluster once.
func (s *Set) All() []*Cluster {
	s.mu.Lock()
	defer s.mu.Unlock()
	return distinct(s.byKey)
}

func distinct(m map[string]*Cluster) []*Cluster {
	seen := map[*Cluster]bool{}
	var out []*Cluster
	for _, cs := range m {
		if !seen[cs] {
			seen[cs] = true
			out = append(out, cs)
		}
	}
	return out
}

// Connect returns the cluster an app names, connecting on first use: the
// cache is started (listed and watched) once for all apps on the cluster,
// and the cluster is probed (see reachable). A cluster that cannot be
// reached is an *UnavailableError; a ctx that ends is its own error.
func (s *Set) Connect(ctx context.Context, dest v1alpha1.ApplicationDestination) (*Cluster, error) {
	cs, err := s.Lookup(dest)
	if err != nil {
		return nil, err
	}
	if cs.cfg.Config == nil {
		return nil, &UnavailableError{Cluster: cs.cfg.Name, Err: errOffline}
	}
	cs.once.Do(func() { cs.err = s.connect(cs) })
	if cs.err != nil {
		return nil, cs.err
	}
	wctx, cancel := context.WithTimeout(ctx, s.conf.Load().settings.SyncTimeout)
	defer cancel()
	if err := cs.cache.WaitForSync(wctx); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("cluster %s: %w", cs.cfg.Name, err)
		}
		return nil, &UnavailableError{Cluster: cs.cfg.Name, Err: err}
	}
	if err := cs.reachable(ctx); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("cluster %s: %w", cs.cfg.Name, err)
		}
		return nil, &UnavailableError{Cluster: cs.cfg.Name, Err: err}
	}
	return cs, nil
}

func (s *Set) connect(cs *Cluster) error {
	cur := s.conf.Load()
	cfg := cur.clientConfig(cs)
	c, err := cur.with.NewCache(cfg, cur.cacheOptions(cs), cur.with.Cache)
	if err != nil {
		return fmt.Errorf("cluster %s: cache: %w", cs.cfg.Name, err)
	}
	sy, err := cur.with.NewSyncer(cfg, cur.settings.Sync, cur.syncCollaborators(cs))
	if err != nil {
		return fmt.Errorf("cluster %s: %w", cs.cfg.Name, err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("cluster %s: %w", cs.cfg.Name, err)
	}
	schemaOpts := diff.DefaultClusterSchemaOptions()
	schemaOpts.BuiltinFirst = true
	schemaSrc, err := diff.NewClusterSchemaWithOptions(cfg, schemaOpts)
	if err != nil {
		return fmt.Errorf("cluster %s: %w", cs.cfg.Name, err)
	}
	dryRun, err := diff.NewDryRunApplier(cfg, 0)
	if err != nil {
		return fmt.Errorf("cluster %s: %w", cs.cfg.Name, err)
	}
	fetcher, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("cluster %s: %w", cs.cfg.Name, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cs.cache, cs.syncer, cs.cancel, cs.probe, cs.schema, cs.dryRun, cs.fetcher = c, sy, cancel, dc.RESTClient(), schemaSrc, dryRun, fetcher
	cs.connected.Store(true)
	go func() {
		if err := c.Start(ctx); err != nil && ctx.Err() == nil {
			cur.with.Log.Error(err, "cluster cache stopped", "cluster", cs.cfg.Name)
		}
	}()
	return nil
}

// SyncerAs returns a syncer of cs that impersonates the service account
// namespace/name, built once and kept for later operations of apps with
// the same account.
func (s *Set) SyncerAs(cs *Cluster, namespace, name string) (Syncer, error) {
	id := namespace + "/" + name
	cs.scopeMu.Lock()
	defer cs.scopeMu.Unlock()
	if sy, ok := cs.impersonated[id]; ok {
		return sy, nil
	}
	cur := s.conf.Load()
	sy, err := cur.with.NewSyncer(project.ImpersonatedConfig(cur.clientConfig(cs), namespace, name), cur.settings.Sync, cur.syncCollaborators(cs))
	if err != nil {
		return nil, err
	}
	if cs.impersonated == nil {
		cs.impersonated = map[string]Syncer{}
	}
	cs.impersonated[id] = sy
	return sy, nil
}

// Close stops every cluster's cache.
func (s *Set) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, cs := range distinct(s.byKey) {
		cs.stop()
	}
}

// Replace replaces the destinations (see the engine's SetClusters): a
// cluster whose name or server is new is added; one no longer listed is
// removed and its cache stopped; one whose configuration changed (Same) is
// replaced by an unconnected one; an unchanged cluster is kept, cache and
// all. It returns the names and servers of the clusters added, changed or
// removed, sorted. It fails, changing nothing, when a cluster has neither a
// name nor a server or two clusters share a name or server.
func (s *Set) Replace(clusters []Config) ([]string, error) {
	next := map[string]*Cluster{}
	for _, c := range clusters {
		if c.Name == "" && c.Server == "" {
			return nil, fmt.Errorf("gitops: SetClusters: a cluster has neither a name nor a server URL")
		}
		for _, k := range []string{c.Name, c.Server} {
			if _, dup := next[k]; k != "" && dup {
				return nil, fmt.Errorf("gitops: SetClusters: two clusters are known as %s", k)
			}
			if k != "" {
				next[k] = nil
			}
		}
		cs := NewCluster(c)
		for _, k := range []string{c.Name, c.Server} {
			if k != "" {
				next[k] = cs
			}
		}
	}
	s.mu.Lock()
	old := s.byKey
	kept := map[*Cluster]bool{}
	for k, cs := range next {
		if prev, ok := old[k]; ok && (kept[prev] || Same(prev.cfg, cs.cfg)) {
			next[k], kept[prev] = prev, true
		}
	}
	var changed, stale []*Cluster
	seen := map[*Cluster]bool{}
	for _, cs := range next {
		if !kept[cs] && !seen[cs] {
			changed = append(changed, cs)
		}
		seen[cs] = true
	}
	for _, cs := range old {
		if !kept[cs] && !seen[cs] {
			stale = append(stale, cs)
			seen[cs] = true
		}
	}
	// The old caches stop before their replacements can connect: a
	// cluster's cache registers metrics under its name, which the old one
	// must have given up.
	for _, cs := range stale {
		cs.stopWhenConnected()
	}
	s.byKey = next
	s.mu.Unlock()
	var names []string
	for _, cs := range append(changed, stale...) {
		names = append(names, cs.cfg.Name, cs.cfg.Server)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	return slices.DeleteFunc(names, func(n string) bool { return n == "" }), nil
}

// Reconfigure replaces the settings and collaborators the clusters are
// connected with, and every cluster by an unconnected one of the same
// configuration, stopping the old caches: each cluster connects again, and
// lists every kind again, on its apps' next use (Argo CD invalidates its
// cluster caches when the settings they were built with change). It
// returns the names and servers of the clusters, sorted.
func (s *Set) Reconfigure(settings Settings, with Collaborators) []string {
	s.mu.Lock()
	s.conf.Store(&conf{settings: settings, with: with})
	old := distinct(s.byKey)
	next := make(map[string]*Cluster, len(s.byKey))
	fresh := map[*Cluster]*Cluster{}
	for k, cs := range s.byKey {
		n, ok := fresh[cs]
		if !ok {
			n = NewCluster(cs.cfg)
			fresh[cs] = n
		}
		next[k] = n
	}
	// The old caches stop before their replacements can connect (see
	// Replace).
	var names []string
	for _, cs := range old {
		cs.stopWhenConnected()
		names = append(names, cs.cfg.Name, cs.cfg.Server)
	}
	s.byKey = next
	s.mu.Unlock()
	slices.Sort(names)
	names = slices.Compact(names)
	return slices.DeleteFunc(names, func(n string) bool { return n == "" })
}
