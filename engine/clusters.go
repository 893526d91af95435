package engine

import (
	"context"
	"errors"
	"fmt"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/project"
	"github.com/kubegitops/gitops/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// clusterState is one destination: its live-state cache and its syncer,
// started on first use.
type clusterState struct {
	cfg ClusterConfig

	once   gosync.Once
	err    error
	cache  ClusterCache
	syncer Syncer
	// connected is set once cache is (for readers outside once.Do).
	connected atomic.Bool
	// schema serves the comparison the models of the kinds the cluster
	// serves that client-go has none for (CRDs and their custom
	// resources, apiextensions.k8s.io, apiregistration.k8s.io).
	schema diff.SchemaSource
	// dryRun runs the server-side dry runs of ServerSideDiff comparisons.
	dryRun diff.DryRunApplier
	cancel context.CancelFunc
	// namespaced records, per group-kind the cluster serves, whether it is
	// namespaced; rebuilt when the cache's discovery changes.
	scopeMu    gosync.Mutex
	scopeGen   uint64
	namespaced map[schema.GroupKind]bool
	// apiVersions is what the cluster serves for Helm's Capabilities, as
	// of the cache's discovery apiVersionsGen (under scopeMu).
	apiVersions    []string
	apiVersionsGen uint64
	// impersonated are syncers acting as service accounts, by namespace/name.
	impersonated map[string]Syncer
	// probe asks the API server for its version; probed and probeErr
	// remember the last answer for probeTTL.
	probe    rest.Interface
	probeMu  gosync.Mutex
	probed   time.Time
	probeErr error
}

// ClusterUnavailableError reports a destination that cannot be reached or
// whose live state cannot be read. Only the apps of that cluster are
// affected: their status is Unknown until it comes back.
type ClusterUnavailableError struct {
	// Cluster is the destination's name.
	Cluster string
	// Err is the cause.
	Err error
}

// Error names the cluster and the cause.
func (e *ClusterUnavailableError) Error() string {
	return fmt.Sprintf("cluster %s is unavailable: %v", e.Cluster, e.Err)
}

// Unwrap returns the cause.
func (e *ClusterUnavailableError) Unwrap() error { return e.Err }

// probeTTL is how long the answer of a cluster probe is trusted, and
// probeTimeout how long a probe may take: a cluster that went away is
// noticed within probeTTL+probeTimeout, for the price of one small request
// per cluster every probeTTL while apps are refreshed.
const (
	probeTTL     = 3 * time.Second
	probeTimeout = 5 * time.Second
)

// reachable asks the cluster for its version, at most once per probeTTL:
// the cache keeps serving what it last saw when its watches break, so
// without this a cluster that went away would look unchanged.
func (cs *clusterState) reachable(ctx context.Context) error {
	cs.probeMu.Lock()
	defer cs.probeMu.Unlock()
	if time.Since(cs.probed) < probeTTL {
		return cs.probeErr
	}
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	err := cs.probe.Get().AbsPath("/version").Do(pctx).Error()
	if ctx.Err() != nil {
		return ctx.Err() // the caller gave up; that says nothing of the cluster
	}
	cs.probed, cs.probeErr = time.Now(), err
	return err
}

// server is the cluster's URL as Applications name it, which resource
// filter entries limited to clusters match: ClusterConfig.Server, or the
// host of its rest.Config.
func (cs *clusterState) server() string {
	if cs.cfg.Server != "" || cs.cfg.Config == nil {
		return cs.cfg.Server
	}
	return cs.cfg.Config.Host
}

func (cs *clusterState) stop() {
	if cs.cancel != nil {
		cs.cancel()
	}
	if cs.cache != nil {
		cs.cache.Stop()
	}
}

// cluster returns the destination's state, connecting on first use: the
// cache is started (listed and watched) once for all apps on the cluster.
func (e *Engine) cluster(ctx context.Context, dest ApplicationDestination) (*clusterState, error) {
	cs, err := e.destination(dest)
	if err != nil {
		return nil, err
	}
	if cs.cfg.Config == nil {
		return nil, &ClusterUnavailableError{Cluster: cs.cfg.Name, Err: errOffline}
	}
	cs.once.Do(func() { cs.err = e.connect(cs) })
	if cs.err != nil {
		return nil, cs.err
	}
	wctx, cancel := context.WithTimeout(ctx, e.opts.ClusterSyncTimeout)
	defer cancel()
	if err := cs.cache.WaitForSync(wctx); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("cluster %s: %w", cs.cfg.Name, err)
		}
		return nil, &ClusterUnavailableError{Cluster: cs.cfg.Name, Err: err}
	}
	if err := cs.reachable(ctx); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("cluster %s: %w", cs.cfg.Name, err)
		}
		return nil, &ClusterUnavailableError{Cluster: cs.cfg.Name, Err: err}
	}
	return cs, nil
}

func (e *Engine) connect(cs *clusterState) error {
	cfg := e.clientConfig(cs)
	copts := e.cacheOptions(cs)
	c, err := e.opts.NewClusterCache(cfg, copts)
	if err != nil {
		return fmt.Errorf("cluster %s: cache: %w", cs.cfg.Name, err)
	}
	sopts := e.syncerOptions(cs)
	s, err := e.opts.NewSyncer(cfg, sopts)
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
	ctx, cancel := context.WithCancel(context.Background())
	cs.cache, cs.syncer, cs.cancel, cs.probe, cs.schema, cs.dryRun = c, s, cancel, dc.RESTClient(), schemaSrc, dryRun
	cs.connected.Store(true)
	go func() {
		if err := c.Start(ctx); err != nil && ctx.Err() == nil {
			e.opts.Log.Error(err, "cluster cache stopped", "cluster", cs.cfg.Name)
		}
	}()
	return nil
}

// errOffline is the cause given for an offline destination.
var errOffline = errors.New("offline destination (ClusterConfig.Config is nil): it can be rendered for, not reached")

// destination finds the configured cluster an app names, by server URL or
// by name, without connecting to it.
func (e *Engine) destination(dest ApplicationDestination) (*clusterState, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	cs, ok := e.clusters[dest.Server]
	if !ok || dest.Server == "" {
		cs, ok = e.clusters[dest.Name]
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

// discoveryGeneration is the generation of the cluster cache's discovery
// when the cache counts its discoveries (*cache.ClusterCache does), so
// that what is built from its API resources is built once per discovery;
// ok is false for a cache that does not count them, whose API resources
// must be read afresh on each use.
func (cs *clusterState) discoveryGeneration() (gen uint64, ok bool) {
	g, ok := cs.cache.(interface{ APIResourcesGeneration() uint64 })
	if !ok {
		return 0, false
	}
	return g.APIResourcesGeneration(), true
}

// isNamespaced reports whether the cluster serves gk as a namespaced kind;
// known is false for kinds the cluster does not serve. The scopes are
// indexed once per discovery (see discoveryGeneration).
func (cs *clusterState) isNamespaced(gk schema.GroupKind) (namespaced, known bool) {
	gen, counted := cs.discoveryGeneration()
	if !counted {
		return scopeOf(cs.cache.APIResources(), gk)
	}
	cs.scopeMu.Lock()
	defer cs.scopeMu.Unlock()
	if cs.namespaced == nil || cs.scopeGen != gen {
		m := map[schema.GroupKind]bool{}
		for _, l := range cs.cache.APIResources() {
			gv, err := schema.ParseGroupVersion(l.GroupVersion)
			if err != nil {
				continue
			}
			for _, r := range l.APIResources {
				m[schema.GroupKind{Group: gv.Group, Kind: r.Kind}] = r.Namespaced
			}
		}
		cs.namespaced, cs.scopeGen = m, gen
	}
	namespaced, known = cs.namespaced[gk]
	return namespaced, known
}

// scopeOf is isNamespaced read from lists.
func scopeOf(lists []metav1.APIResourceList, gk schema.GroupKind) (namespaced, known bool) {
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil || gv.Group != gk.Group {
			continue
		}
		for _, r := range l.APIResources {
			if r.Kind == gk.Kind {
				namespaced, known = r.Namespaced, true
			}
		}
	}
	return namespaced, known
}

// syncerFor returns the syncer for an app: the cluster's own, or one that
// impersonates the service account the app's project names (kept for
// later operations of apps with the same account).
func (e *Engine) syncerFor(cs *clusterState, proj *Project, app *Application) (Syncer, error) {
	ns, name, ok := project.ServiceAccountFor(proj, app)
	if !ok {
		return cs.syncer, nil
	}
	id := ns + "/" + name
	cs.scopeMu.Lock()
	defer cs.scopeMu.Unlock()
	if s, ok := cs.impersonated[id]; ok {
		return s, nil
	}
	opts := e.syncerOptions(cs)
	cfg := e.clientConfig(cs)
	s, err := e.opts.NewSyncer(ImpersonatedConfig(cfg, ns, name), opts)
	if err != nil {
		return nil, err
	}
	if cs.impersonated == nil {
		cs.impersonated = map[string]Syncer{}
	}
	cs.impersonated[id] = s
	return s, nil
}

// managed answers the syncer's question "which live objects are the app's"
// from the cache's index.
func (cs *clusterState) managed(ctx context.Context, app string) ([]*unstructured.Unstructured, error) {
	return cs.cache.Managed(app), nil
}

// live answers the syncer's waits from the cache (sync.Options.Live):
// nothing before the cache is connected.
func (cs *clusterState) live(key resource.Key) (*unstructured.Unstructured, bool) {
	c := cs.connectedCache()
	if c == nil {
		return nil, false
	}
	return c.Get(key)
}

// absent reports that the cluster's cache, connected, does not hold key:
// a sync then leaves the object unread until its dry-run tells
// (sync.Options.Absent). Without a connected cache nothing is said absent.
func (cs *clusterState) absent(key resource.Key) bool {
	c := cs.connectedCache()
	if c == nil {
		return false
	}
	_, ok := c.Get(key)
	return !ok
}

// connectedCache is the cluster's cache once connected, else nil.
func (cs *clusterState) connectedCache() ClusterCache {
	if !cs.connected.Load() {
		return nil
	}
	return cs.cache
}
