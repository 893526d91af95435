package cache

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/go-logr/logr"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubegitops/gitops/resource"
)

// ClusterCache holds the live state of one cluster: every watched kind is
// listed (in pages) and then watched from the list's resourceVersion, and
// the objects are kept, trimmed, in indexes by key, application, namespace,
// kind and owner. Each kind fails alone: one that cannot be listed or
// watched is reported by Tainted while the others keep serving.
//
// All query methods are safe for concurrent use and cost O(their answer).
// Get and Managed return copies of their own (a whole object is kept as its
// JSON and decoded for each reader); the objects of Events are shared by
// every subscriber and must not be modified.
type ClusterCache struct {
	opts    Options
	with    Collaborators
	dyn     dynamic.Interface
	disc    discovery.DiscoveryInterface
	review  accessReviewer
	listSem chan struct{}
	// reviewSem bounds concurrent access reviews.
	reviewSem chan struct{}
	metrics   *metrics
	events    *batcher

	mu            sync.RWMutex
	store         *store
	synced        bool
	apiLists      []metav1.APIResourceList
	apiGen        uint64 // counts the discoveries that set apiLists
	serverVersion string
	// taints holds the error of each failing watch, forbidden kind and
	// failed group version (keyed by a watchID with no Resource).
	taints map[watchID]*KindError

	// watchMu guards watches; only Start and the discovery loop change it.
	watchMu sync.Mutex
	watches map[watchID]*kindWatch

	started  chan struct{}
	syncedCh chan struct{}
	// startDone closes when Start returns, after startErr is set.
	startDone chan struct{}
	kick      chan struct{}
	// stopMetrics unregisters the metrics once, on the first Stop.
	stopMetrics sync.Once
	cancel      context.CancelFunc
	wg          sync.WaitGroup
	startErr    error
}

// New returns a cache for the cluster cfg points at, with the settings opts
// and the collaborators with. Nothing is contacted until Start. cfg is
// copied; its QPS and Burst are raised to opts' when zero.
func New(cfg *rest.Config, opts Options, with Collaborators) (*ClusterCache, error) {
	opts, with = opts.withDefaults(), with.withDefaults()
	watchCfg := rest.CopyConfig(cfg)
	if watchCfg.QPS == 0 {
		watchCfg.QPS = opts.QPS
	}
	if watchCfg.Burst == 0 {
		watchCfg.Burst = opts.Burst
	}
	// Watches must not inherit an http.Client timeout; every other request
	// of this cache gets RequestTimeout through its context or this config.
	watchCfg.Timeout = 0
	// Deprecation warnings (v1 Endpoints) would otherwise go to klog on
	// every list and watch.
	watchCfg.WarningHandlerWithContext = nil
	watchCfg.WarningHandler = warningLogger{with.Logger}
	reqCfg := rest.CopyConfig(watchCfg)
	reqCfg.Timeout = opts.RequestTimeout

	dyn, err := dynamic.NewForConfig(watchCfg)
	if err != nil {
		return nil, fmt.Errorf("cache: dynamic client: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(reqCfg)
	if err != nil {
		return nil, fmt.Errorf("cache: discovery client: %w", err)
	}
	cs, err := kubernetes.NewForConfig(reqCfg)
	if err != nil {
		return nil, fmt.Errorf("cache: clientset: %w", err)
	}
	c := &ClusterCache{
		opts:      opts,
		with:      with,
		dyn:       dyn,
		disc:      dc,
		listSem:   make(chan struct{}, opts.ListConcurrency),
		reviewSem: make(chan struct{}, 4*opts.ListConcurrency),
		store:     newStore(),
		taints:    map[watchID]*KindError{},
		watches:   map[watchID]*kindWatch{},
		started:   make(chan struct{}),
		syncedCh:  make(chan struct{}),
		startDone: make(chan struct{}),
		kick:      make(chan struct{}, 1),
	}
	c.review = ssarReviewer{
		create: func(ctx context.Context, r *authorizationv1.SelfSubjectAccessReview) (*authorizationv1.SelfSubjectAccessReview, error) {
			return cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, r, metav1.CreateOptions{})
		},
		timeout: c.withRequestTimeout,
	}
	c.events = newBatcher(opts.BatchInterval)
	m, err := newMetrics(c, with.Registerer, opts.Name)
	if err != nil {
		return nil, err
	}
	c.metrics = m
	return c, nil
}

func (c *ClusterCache) withRequestTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.opts.RequestTimeout)
}

// Start discovers the API, lists every watched kind (at most
// ListConcurrency at a time, PageSize objects per page) and starts the
// watches; it returns once every kind has been listed or has failed its
// first attempt (and is tainted), or when ctx ends. ctx also bounds the
// cache's life: cancel it, or call Stop, to end every watch. Start may be
// called once; it fails only when discovery fails as a whole.
func (c *ClusterCache) Start(ctx context.Context) error {
	select {
	case <-c.started:
		return errors.New("cache: Start called twice")
	default:
	}
	ctx, cancel := context.WithCancel(ctx)
	c.cancel = cancel
	close(c.started)
	err := c.start(ctx)
	c.startErr = err
	close(c.startDone)
	return err
}

func (c *ClusterCache) start(ctx context.Context) error {
	firsts, err := c.refresh(ctx)
	if err != nil {
		c.cancel()
		return err
	}
	for _, ch := range firsts {
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", ErrNotSynced, ctx.Err())
		}
	}
	c.mu.Lock()
	c.synced = true
	c.mu.Unlock()
	close(c.syncedCh)
	c.wg.Add(2)
	go func() { defer c.wg.Done(); c.events.run(ctx) }()
	go func() { defer c.wg.Done(); c.discoveryLoop(ctx) }()
	c.with.Logger.Info("cluster cache synced", "cluster", c.opts.Name, "objects", c.Len(), "tainted", len(c.Tainted()))
	return nil
}

// WaitForSync blocks until Start has synced the cache, Start failed, or ctx
// ends.
func (c *ClusterCache) WaitForSync(ctx context.Context) error {
	select {
	case <-c.syncedCh:
		return nil
	case <-c.startDone:
		if c.startErr != nil {
			return c.startErr
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", ErrNotSynced, ctx.Err())
	}
}

// Stop ends every watch and waits for the cache's goroutines, and removes
// the cache's metrics from Collaborators.Registerer (so a new cache of the same
// Name may register them). The cached objects stay readable.
func (c *ClusterCache) Stop() {
	c.stopMetrics.Do(c.metrics.unregister)
	select {
	case <-c.started:
	default:
		return
	}
	c.cancel()
	c.watchMu.Lock()
	for _, w := range c.watches {
		<-w.done
	}
	c.watchMu.Unlock()
	c.wg.Wait()
}

// Synced reports whether Start has returned successfully.
func (c *ClusterCache) Synced() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.synced
}

// Get returns the cached object of key: the whole (trimmed) object when the
// populate hook kept it, otherwise an object holding apiVersion, kind and
// the kept metadata (name, namespace, uid, resourceVersion, labels,
// ownerReferences). Each call returns a copy of its own (decoded from the
// JSON the cache keeps), which the caller may modify; a caller that needs
// only to know whether an object changed asks ObjectVersion, which decodes
// nothing.
func (c *ClusterCache) Get(key resource.Key) (*unstructured.Unstructured, bool) {
	c.mu.RLock()
	e, ok := c.store.byKey[key]
	c.mu.RUnlock()
	if !ok {
		return nil, false
	}
	return e.object(), true
}

// Info returns the value the populate hook attached to the object of key.
func (c *ClusterCache) Info(key resource.Key) (any, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.store.byKey[key]
	if !ok {
		return nil, false
	}
	return e.info, true
}

// Managed returns the objects that app tracks on this engine instance (see
// resource.Tracking.AppOf), sorted by key, each a copy of its own as Get
// returns. Cost: O(the app's objects), decoding included; ManagedVersions
// answers "did any change" without decoding.
func (c *ClusterCache) Managed(app string) []*unstructured.Unstructured {
	c.mu.RLock()
	entries := entriesIn(c.store.byApp[app])
	c.mu.RUnlock()
	out := make([]*unstructured.Unstructured, len(entries))
	for i, e := range entries {
		out[i] = e.object()
	}
	return out
}

// Apps returns the applications that track at least one cached object.
func (c *ClusterCache) Apps() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, 0, len(c.store.byApp))
	for a := range c.store.byApp {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// Namespace returns the keys of the cached objects in namespace ns ("" for
// cluster-scoped objects), sorted.
func (c *ClusterCache) Namespace(ns string) []resource.Key {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return keysIn(c.store.byNamespace[ns])
}

// Children returns the keys of the objects whose ownerReferences point at
// the object of key (across namespaces) and of those inferred to belong to
// it (Endpoints and EndpointSlices to their Service, PVCs to their
// StatefulSet), sorted.
func (c *ClusterCache) Children(key resource.Key) []resource.Key {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.store.children(key)
}

// Tree returns key and every descendant of it, breadth first, each once:
// ownership cycles end the walk. Nil when key is not cached.
func (c *ClusterCache) Tree(key resource.Key) []resource.Key {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.store.tree(key)
}

// AppOf returns the application tracking the object of key or its nearest
// tracked owner ("" for none).
func (c *ClusterCache) AppOf(key resource.Key) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.store.appOf(c.store.byKey[key])
}

// Len returns the number of cached objects.
func (c *ClusterCache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.store.byKey)
}

// Stats counts the cached objects.
type Stats struct {
	// Objects is the number of cached objects; Whole of them are kept
	// whole, the rest as metadata.
	Objects, Whole int
	// Watches is the number of running list-watches.
	Watches int
}

// Stats returns the current counts.
func (c *ClusterCache) Stats() Stats {
	c.watchMu.Lock()
	n := len(c.watches)
	c.watchMu.Unlock()
	c.mu.RLock()
	defer c.mu.RUnlock()
	return Stats{Objects: len(c.store.byKey), Whole: c.store.whole, Watches: n}
}

// APIResourcesGeneration counts the discoveries that changed what
// APIResources returns (a periodic discovery that found the same resources
// and server version does not count): a caller that derives something from
// the resources (which kinds are namespaced) derives it again only when the
// count moves, instead of copying the resources on every use.
func (c *ClusterCache) APIResourcesGeneration() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.apiGen
}

// APIResources returns the server's preferred API resources from the last
// discovery, for renderers (Helm's .Capabilities.APIVersions).
func (c *ClusterCache) APIResources() []metav1.APIResourceList {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]metav1.APIResourceList, len(c.apiLists))
	for i := range c.apiLists {
		c.apiLists[i].DeepCopyInto(&out[i])
	}
	return out
}

// ServerVersion returns the server's git version ("v1.37.2") from the last
// discovery.
func (c *ClusterCache) ServerVersion() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.serverVersion
}

// Tainted returns the kinds not fully served, each with its *KindError:
// kinds that failed their last list or watch, kinds skipped because the
// identity may not list and watch them, and group versions that failed
// discovery (Kind empty). A host should refuse only the applications that
// touch one of them.
func (c *ClusterCache) Tainted() map[schema.GroupVersionKind]error {
	return c.taintedWhere(func(*KindError) bool { return true })
}

// Skipped returns the kinds left out because RBAC denies list or watch.
func (c *ClusterCache) Skipped() map[schema.GroupVersionKind]error {
	return c.taintedWhere(func(e *KindError) bool { return e.Reason == ReasonForbidden })
}

func (c *ClusterCache) taintedWhere(keep func(*KindError) bool) map[schema.GroupVersionKind]error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := map[schema.GroupVersionKind]error{}
	for _, e := range c.taints {
		if _, dup := out[e.GVK]; !dup && keep(e) {
			out[e.GVK] = e
		}
	}
	return out
}

func (c *ClusterCache) setTaint(id watchID, e *KindError) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, had := c.taints[id]; !had {
		c.with.Logger.Info("kind tainted", "cluster", c.opts.Name, "error", e.Error())
	}
	c.taints[id] = e
}

func (c *ClusterCache) clearTaint(id watchID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, had := c.taints[id]; had {
		c.with.Logger.Info("kind recovered", "cluster", c.opts.Name, "gvk", e.GVK.String(), "namespace", id.namespace)
		delete(c.taints, id)
	}
}

// warningLogger sends API server warnings to the cache's logger at V(1).
type warningLogger struct{ log logr.Logger }

// HandleWarningHeader logs one warning.
func (w warningLogger) HandleWarningHeader(code int, agent, text string) {
	w.log.V(1).Info("API server warning", "text", text)
}
