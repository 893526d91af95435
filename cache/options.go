package cache

import (
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegitops/gitops/resource"
)

// PopulateFunc decides, per object, what the cache keeps. obj is the object
// as listed or watched, already trimmed (see Options.KeepManagedFields and
// Options.KeepLastApplied); app is the application that tracks it ("" when
// none). It returns a small value to keep next to the object's metadata
// (may be nil) and whether to keep the whole object. It is called from the
// watch goroutines of several kinds at once, so it must be safe for
// concurrent use; keep it fast and never call back into the cache.
type PopulateFunc func(obj *unstructured.Unstructured, app string) (info any, keepWhole bool)

// Options configure a ClusterCache. Start from DefaultOptions.
type Options struct {
	// Name identifies the cluster in logs and metric labels. Default "".
	Name string
	// Filter chooses the kinds to watch. Default: every listable and
	// watchable kind except DefaultExclusions.
	Filter ResourceFilter
	// Server is the cluster's server URL as Applications name it
	// (destination.server), which Filter entries limited to clusters
	// match. Default "": such entries never match.
	Server string
	// Namespaces, when not empty, restricts namespaced kinds to these
	// namespaces (one watch per kind and namespace), and cluster-scoped
	// kinds to ClusterKinds. Default empty: the whole cluster.
	Namespaces []string
	// ClusterKinds are the cluster-scoped kinds watched in namespaced mode
	// (they still pass Filter). Ignored when Namespaces is empty.
	ClusterKinds []GroupKindMatch
	// RespectRBAC checks with SelfSubjectAccessReviews that the identity may
	// both list and watch each kind (in each namespace, in namespaced
	// mode) and skips the kinds it may not, reporting them in Skipped and
	// Tainted. When false, or when the review itself fails, a forbidden
	// list or watch is found by trying and taints the kind. Default true.
	RespectRBAC bool
	// PageSize is the number of objects per list page. Default 500.
	PageSize int64
	// ListConcurrency bounds how many lists run at once. Default 8.
	ListConcurrency int
	// WatchTimeout is the longest a single watch request stays open before
	// it is restarted from the last resourceVersion (a random duration
	// between half of it and it). Default 10 minutes.
	WatchTimeout time.Duration
	// RetryInitial and RetryMax bound the backoff between attempts to list
	// or watch a failing kind. Defaults 500 ms and 10 s.
	RetryInitial, RetryMax time.Duration
	// DiscoveryInterval is how often discovery is refreshed even when no
	// CRD or APIService event asked for it. Default 3 minutes.
	DiscoveryInterval time.Duration
	// KeepManagedFields keeps metadata.managedFields. Default false: they
	// are often half of an object's bytes and nothing downstream reads them
	// from the cache (server-side diff asks the server).
	KeepManagedFields bool
	// KeepManagedFieldsOf keeps the managedFields entries of these field
	// managers only (when KeepManagedFields is false). The engine keeps its
	// own, so that a field removed from Git, which the next server-side
	// apply removes, is seen as a difference; one entry costs far less
	// than all of them.
	KeepManagedFieldsOf []string
	// KeepLastApplied keeps the kubectl last-applied-configuration
	// annotation. Default false.
	KeepLastApplied bool
	// BatchInterval is how long events are gathered and coalesced before
	// subscribers are called. Default 100 ms.
	BatchInterval time.Duration
	// QPS and Burst set the client rate limit when the rest.Config leaves
	// them zero. Defaults 50 and 100.
	QPS   float32
	Burst int
	// RequestTimeout bounds every request but watches. Default 60 s.
	RequestTimeout time.Duration
}

// KeepWholeKinds are kinds kept whole by DefaultPopulate whether tracked or
// not: CRDs (their schemas and versions drive discovery and diffing).
func KeepWholeKinds() []schema.GroupKind {
	return []schema.GroupKind{
		{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"},
	}
}

// DefaultPopulate keeps whole objects for objects tracked by an application
// and for KeepWholeKinds, and metadata alone (no info value) for the rest.
func DefaultPopulate() PopulateFunc {
	keep := KeepWholeKinds()
	return func(obj *unstructured.Unstructured, app string) (any, bool) {
		if app != "" {
			return nil, true
		}
		gk := obj.GroupVersionKind().GroupKind()
		for _, k := range keep {
			if k == gk {
				return nil, true
			}
		}
		return nil, false
	}
}

// DefaultOptions returns the options documented on each field.
func DefaultOptions() Options {
	return Options{
		Filter:            ResourceFilter{Exclude: DefaultExclusions()},
		RespectRBAC:       true,
		PageSize:          500,
		ListConcurrency:   8,
		WatchTimeout:      10 * time.Minute,
		RetryInitial:      500 * time.Millisecond,
		RetryMax:          10 * time.Second,
		DiscoveryInterval: 3 * time.Minute,
		BatchInterval:     100 * time.Millisecond,
		QPS:               50,
		Burst:             100,
		RequestTimeout:    60 * time.Second,
	}
}

// withDefaults fills zero fields, so that a partly filled Options works.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.PageSize <= 0 {
		o.PageSize = d.PageSize
	}
	if o.ListConcurrency <= 0 {
		o.ListConcurrency = d.ListConcurrency
	}
	if o.WatchTimeout <= 0 {
		o.WatchTimeout = d.WatchTimeout
	}
	if o.RetryInitial <= 0 {
		o.RetryInitial = d.RetryInitial
	}
	if o.RetryMax < o.RetryInitial {
		o.RetryMax = max(d.RetryMax, o.RetryInitial)
	}
	if o.DiscoveryInterval <= 0 {
		o.DiscoveryInterval = d.DiscoveryInterval
	}
	if o.BatchInterval <= 0 {
		o.BatchInterval = d.BatchInterval
	}
	if o.QPS <= 0 {
		o.QPS = d.QPS
	}
	if o.Burst <= 0 {
		o.Burst = d.Burst
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = d.RequestTimeout
	}
	return o
}

// Collaborators are what a ClusterCache asks or reports to, as opposed to
// the settings of Options: a host that embeds caches in something larger
// (the engine gives its tracking, its logger and registerer, and its own
// Populate and SkipUpdate) passes them to New beside the settings, so no
// setting is ever silently replaced by its owner's. Every field may be
// left zero.
type Collaborators struct {
	// Tracking says how objects are tied to applications (the index behind
	// Managed). Default resource.DefaultTracking().
	Tracking resource.Tracking
	// Populate decides what is kept of each object. Default
	// DefaultPopulate(Tracking): whole objects for tracked objects and
	// for KeepWholeKinds, metadata for the rest.
	Populate PopulateFunc
	// SkipUpdate, when set, is asked about each update of an object kept
	// whole (a tracked object, by DefaultPopulate) whose old version the
	// cache holds whole too: true drops the event (the cache is still
	// updated, and gitops_cluster_cache_ignored_updates_total counts it).
	// It runs on the watch goroutine of the object's kind, outside the
	// cache's lock, and must be safe for concurrent use. StatusOnlyUpdate
	// drops updates that change only status. Default nil: every update
	// is announced.
	SkipUpdate func(old, cur *unstructured.Unstructured) bool
	// Logger receives progress and errors. Default logr.Discard().
	Logger logr.Logger
	// Registerer receives the cache's metrics, labelled with Options.Name. Default
	// nil: no metrics.
	Registerer prometheus.Registerer
}

// withDefaults fills zero fields.
func (c Collaborators) withDefaults() Collaborators {
	d := resource.DefaultTracking()
	if c.Tracking.AnnotationKey == "" {
		c.Tracking.AnnotationKey = d.AnnotationKey
	}
	if c.Tracking.InstanceAnnotationKey == "" {
		c.Tracking.InstanceAnnotationKey = d.InstanceAnnotationKey
	}
	if c.Logger.GetSink() == nil {
		c.Logger = logr.Discard()
	}
	if c.Populate == nil {
		c.Populate = DefaultPopulate()
	}
	return c
}
