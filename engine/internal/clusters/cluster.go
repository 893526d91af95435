package clusters

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	gosync "sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/resource"
)

// Cluster is one destination: its configuration, and once connected its
// cache, syncers and discovery.
type Cluster struct {
	cfg Config

	once   gosync.Once
	err    error
	cache  Cache
	syncer Syncer
	// connected is set once cache is (for readers outside once.Do).
	connected atomic.Bool
	schema    diff.SchemaSource
	dryRun    diff.DryRunApplier
	// fetcher reads whole objects the cache keeps lean (Fetch).
	fetcher dynamic.Interface
	cancel  context.CancelFunc
	// scopeMu guards namespaced and apiVersions, rebuilt when the cache's
	// discovery changes, and impersonated.
	scopeMu        gosync.Mutex
	scopeGen       uint64
	namespaced     map[schema.GroupKind]bool
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

// NewCluster returns the unconnected state of one destination (Set builds
// them; tests of what a cache answers may too).
func NewCluster(cfg Config) *Cluster { return &Cluster{cfg: cfg} }

// NewConnected returns a destination whose cache is c, as a connected one
// would have (for tests of what is read from the cache).
func NewConnected(cfg Config, c Cache) *Cluster {
	cs := &Cluster{cfg: cfg, cache: c}
	cs.connected.Store(true)
	return cs
}

// UnavailableError reports a destination that cannot be reached or whose
// live state cannot be read.
type UnavailableError struct {
	// Cluster is the destination's name.
	Cluster string
	// Err is the cause.
	Err error
}

// Error names the cluster and the cause.
func (e *UnavailableError) Error() string {
	return fmt.Sprintf("cluster %s is unavailable: %v", e.Cluster, e.Err)
}

// Unwrap returns the cause.
func (e *UnavailableError) Unwrap() error { return e.Err }

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
func (cs *Cluster) reachable(ctx context.Context) error {
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

// Config is the destination's configuration.
func (cs *Cluster) Config() Config { return cs.cfg }

// Name is the destination's name.
func (cs *Cluster) Name() string { return cs.cfg.Name }

// Server is the cluster's URL as Applications name it, which resource
// filter entries limited to clusters match: Config.Server, or the host of
// its rest.Config.
func (cs *Cluster) Server() string {
	if cs.cfg.Server != "" || cs.cfg.Config == nil {
		return cs.cfg.Server
	}
	return cs.cfg.Config.Host
}

// Cache is the cluster's cache: nil before Set.Connect returned the
// cluster.
func (cs *Cluster) Cache() Cache { return cs.cache }

// Syncer is the cluster's own syncer (the engine's identity).
func (cs *Cluster) Syncer() Syncer { return cs.syncer }

// Schema serves the comparison the models of the kinds the cluster serves
// that client-go has none for (CRDs and their custom resources).
func (cs *Cluster) Schema() diff.SchemaSource { return cs.schema }

// DryRun runs the server-side dry runs of ServerSideDiff comparisons.
func (cs *Cluster) DryRun() diff.DryRunApplier { return cs.dryRun }

func (cs *Cluster) stop() {
	if cs.cancel != nil {
		cs.cancel()
	}
	if cs.cache != nil {
		cs.cache.Stop()
	}
}

// stopWhenConnected stops the cluster's cache once its connection, if one
// is being made, is done.
func (cs *Cluster) stopWhenConnected() {
	cs.once.Do(func() { cs.err = errReplaced })
	cs.stop()
}

// DiscoveryGeneration is the generation of the cluster cache's discovery
// when the cache counts its discoveries (*cache.ClusterCache does), so
// that what is built from its API resources is built once per discovery;
// ok is false for a cache that does not count them, whose API resources
// must be read afresh on each use.
func (cs *Cluster) DiscoveryGeneration() (gen uint64, ok bool) {
	g, ok := cs.cache.(interface{ APIResourcesGeneration() uint64 })
	if !ok {
		return 0, false
	}
	return g.APIResourcesGeneration(), true
}

// IsNamespaced reports whether the cluster serves gk as a namespaced kind;
// known is false for kinds the cluster does not serve. The scopes are
// indexed once per discovery (see DiscoveryGeneration).
func (cs *Cluster) IsNamespaced(gk schema.GroupKind) (namespaced, known bool) {
	gen, counted := cs.DiscoveryGeneration()
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

// ServedScope is the cluster's answer to "is this kind namespaced", or nil
// for an offline (or not yet connected) destination, or a nil cs.
func (cs *Cluster) ServedScope() func(schema.GroupKind) (namespaced, known bool) {
	if cs == nil || cs.cache == nil {
		return nil
	}
	return cs.IsNamespaced
}

// scopeOf is IsNamespaced read from lists.
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

// APIVersions lists "group/version" and "group/version/Kind" for every
// resource the cluster serves, as Helm's .Capabilities.APIVersions wants.
// The list is built once per discovery (see DiscoveryGeneration: every
// render asked for it, and copying and sorting the cluster's resources was
// 7% of a 10,000-app fleet's cold start); callers share it and must not
// change it.
func (cs *Cluster) APIVersions() []string {
	gen, counted := cs.DiscoveryGeneration()
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

// Manages refuses a desired object the cluster's Namespaces leave out, as
// Argo CD's namespaced cluster cache does.
func (cs *Cluster) Manages(obj *unstructured.Unstructured, namespaced bool) error {
	ns := cs.cfg.Namespaces
	if len(ns) == 0 {
		return nil
	}
	key := resource.KeyOf(obj)
	switch {
	case !namespaced && !cs.cfg.ClusterResources:
		return fmt.Errorf("cluster %s: cluster level %s %q can not be managed when in namespaced mode (its Secret has no clusterResources: \"true\")", cs.cfg.Name, key.Kind, key.Name)
	case namespaced && !slices.Contains(ns, obj.GetNamespace()):
		return fmt.Errorf("cluster %s: namespace %s of %s %q is not managed (not in the cluster's namespaces)", cs.cfg.Name, obj.GetNamespace(), key.Kind, key.Name)
	}
	return nil
}

// managed answers the syncer's question "which live objects are the app's"
// from the cache's index (sync.Collaborators.ManagedObjects).
func (cs *Cluster) managed(_ context.Context, app string) ([]*unstructured.Unstructured, error) {
	return cs.cache.Managed(app), nil
}

// live answers the syncer's waits from the cache (sync.Collaborators.Live):
// nothing before the cache is connected.
func (cs *Cluster) live(key resource.Key) (*unstructured.Unstructured, bool) {
	c := cs.ConnectedCache()
	if c == nil {
		return nil, false
	}
	return c.Get(key)
}

// absent reports that the cluster's cache, connected, does not hold key:
// a sync then leaves the object unread until its dry-run tells
// (sync.Collaborators.Absent). Without a connected cache nothing is said
// absent.
func (cs *Cluster) absent(key resource.Key) bool {
	c := cs.ConnectedCache()
	if c == nil {
		return false
	}
	if v, ok := c.(cache.Versions); ok {
		_, found := v.ObjectVersion(key)
		return !found
	}
	_, ok := c.Get(key)
	return !ok
}

// ConnectedCache is the cluster's cache once connected, else nil; unlike
// Cache it may be read while a connection is being made.
func (cs *Cluster) ConnectedCache() Cache {
	if !cs.connected.Load() {
		return nil
	}
	return cs.cache
}
