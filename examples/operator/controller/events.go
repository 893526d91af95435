package controller

import (
	"context"
	"strings"
	gosync "sync"
	"time"

	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/engine"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// eventDelay gathers the bursts of changes one sync makes (a Deployment,
// its ReplicaSet, its Pods) into one reconcile.
const eventDelay = 200 * time.Millisecond

// ClusterEvents turns changes of managed objects in the engine's cluster
// caches into reconcile requests for their Applications, which is how drift
// is seen (and self-healed) without waiting for the next interval. Build it
// before the engine, give NewClusterCache to gitops.Options, and give it to
// the Reconciler.
type ClusterEvents struct {
	namespace string

	mu    gosync.Mutex
	queue workqueue.TypedRateLimitingInterface[reconcile.Request]
}

// NewClusterEvents returns the event bridge of an engine whose control
// namespace (gitops.Options.ControlNamespace) is namespace: an event for
// the objects of app "x" queues namespace/x, one of app "team_x" queues
// team/x.
func NewClusterEvents(namespace string) *ClusterEvents {
	return &ClusterEvents{namespace: namespace}
}

// NewClusterCache builds each cluster's cache as the engine does by default
// (cache.New) and subscribes to its changes. Set it as
// gitops.Options.NewClusterCache.
func (ce *ClusterEvents) NewClusterCache(cfg *rest.Config, opts cache.Options, with cache.Collaborators) (engine.ClusterCache, error) {
	c, err := cache.New(cfg, opts, with)
	if err != nil {
		return nil, err
	}
	// The subscription lives as long as the cache: delivery ends when it stops.
	c.Subscribe(ce.deliver)
	return c, nil
}

// deliver queues the app of a change. It never blocks the cache: before
// the controller starts, changes are dropped (the first reconcile of every
// app comes from the controller's initial list).
func (ce *ClusterEvents) deliver(ev cache.Event) {
	if ev.App == "" {
		return
	}
	ce.mu.Lock()
	q := ce.queue
	ce.mu.Unlock()
	if q != nil {
		q.AddAfter(reconcile.Request{NamespacedName: ce.appOf(ev.App)}, eventDelay)
	}
}

// appOf is the Application of a tracking id, which is the engine's
// instance name: "<namespace>_<name>" for an Application outside the
// control namespace, its bare name inside (an underscore is never part of
// a namespace or a name). The engine's ControlNamespace must be the
// events' namespace.
func (ce *ClusterEvents) appOf(key string) types.NamespacedName {
	if ns, name, ok := strings.Cut(key, "_"); ok {
		return types.NamespacedName{Namespace: ns, Name: name}
	}
	return types.NamespacedName{Namespace: ce.namespace, Name: key}
}

// source is the controller-runtime source that hands the controller's
// queue to the bridge while the controller runs.
func (ce *ClusterEvents) source() source.Source {
	return source.Func(func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		ce.mu.Lock()
		ce.queue = q
		ce.mu.Unlock()
		go func() {
			<-ctx.Done()
			ce.mu.Lock()
			if ce.queue == q {
				ce.queue = nil
			}
			ce.mu.Unlock()
		}()
		return nil
	})
}

// CacheNamespaces are the namespaces a manager's cache watches for an
// operator whose control namespace is control and which serves the
// Applications of other too: nil (every namespace) when other holds "*".
func CacheNamespaces(control string, other []string) map[string]crcache.Config {
	out := map[string]crcache.Config{control: {}}
	for _, ns := range other {
		if ns == "*" {
			return nil
		}
		out[ns] = crcache.Config{}
	}
	return out
}

// Requeue queues a reconcile of the Application at once (a host saw its
// destination change, a cluster Secret added, rotated or deleted, or what
// judges its objects change, such as a health script). Before
// the controller starts it does nothing: the controller's initial list
// reconciles every Application.
func (ce *ClusterEvents) Requeue(app types.NamespacedName) {
	ce.mu.Lock()
	q := ce.queue
	ce.mu.Unlock()
	if q != nil {
		q.Add(reconcile.Request{NamespacedName: app})
	}
}
