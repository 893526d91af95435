package compare

import (
	"context"
	"hash/maphash"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/project"
	"github.com/kubegitops/gitops/resource"
)

// Differ compares one desired object with its live object (the engine's
// Differ: *diff.Differ by default).
type Differ interface {
	Diff(ctx context.Context, desired, live *unstructured.Unstructured) (diff.Result, error)
	// KeepIgnored returns desired with the fields the app's ignore rules
	// cover set to their live values.
	KeepIgnored(ctx context.Context, desired, live *unstructured.Unstructured) (*unstructured.Unstructured, error)
}

// Config is a Comparer's settings and collaborators.
type Config struct {
	// Tracking says where tracking ids go and which instance this is.
	Tracking resource.Tracking
	// Health judges live objects. Required. A checker with a method
	// Current() health.Checker (the engine's, which Reconfigure replaces)
	// stands for the checker it returns: each comparison and each memo
	// reuse judges with the one current as it starts.
	Health health.Checker
	// Policies are the host's checks of every desired object.
	Policies []project.Policy
	// NewDiffer builds the differ of one set of options. Nil: the
	// Comparer compiles one diff.Differ per set of options and forks it
	// for each app.
	NewDiffer func(opts diff.Options) (Differ, error)
	// ApplyChildApplications compares the Applications an app renders as
	// any object; false reports them as children (app of apps).
	ApplyChildApplications bool

	// The comparison options every app's differ starts from (see the
	// engine's Options of the same names).
	KnownTypeFields       []diff.KnownTypeField
	IgnoreAggregatedRoles bool
	CompareAllStatus      bool
	IgnoreStatus          []schema.GroupKind
	IgnoreDifferences     []v1alpha1.ResourceIgnoreDifferences
	// FieldManager is the sync's field manager, when not the default.
	FieldManager string
	// ClientSideApply, ServerSideDiff and ForceConflicts say how the
	// syncer applies, so that the comparison predicts what it would do.
	ClientSideApply bool
	ServerSideDiff  bool
	ForceConflicts  bool
	// JQTimeout bounds one jq ignore expression on one object
	// (diff.Options.JQTimeout); zero keeps the diff's default.
	JQTimeout time.Duration
}

// Cache is what a comparison reads of the destination's live state.
type Cache interface {
	// Get returns the cached object of key.
	Get(key resource.Key) (*unstructured.Unstructured, bool)
	// Managed returns the objects an app's tracking id names.
	Managed(app string) []*unstructured.Unstructured
	// Namespace returns the keys of the cached objects of a namespace.
	Namespace(ns string) []resource.Key
	// Tainted returns the kinds that cannot be served, with why.
	Tainted() map[schema.GroupVersionKind]error
}

// Destination is the connected cluster an app is compared against.
type Destination struct {
	// Name is the cluster's name, an input of the refresh memo.
	Name string
	// Server is the cluster's server URL: with Name, what a project's
	// destinations match, whichever of the two the app gives.
	Server string
	// ID tells this connection of the cluster from any other (a
	// reconnected cluster has new schemas): part of each differ's key.
	ID string
	// Cache is the cluster's live state.
	Cache Cache
	// Scope says whether the cluster serves a kind as namespaced.
	Scope func(schema.GroupKind) (namespaced, known bool)
	// Manages refuses an object the cluster's configuration does not let
	// the engine manage (namespaced mode), or is nil.
	Manages func(obj *unstructured.Unstructured, namespaced bool) error
	// Discovery returns the generation of the cluster's discovery; ok is
	// false when the cache does not count them (nothing is memoized).
	Discovery func() (gen uint64, ok bool)
	// Schema models the kinds client-go has no model for, or is nil.
	Schema diff.SchemaSource
	// DryRun asks the server (server-side diff), or is nil.
	DryRun diff.DryRunApplier
	// Fetch reads a whole object from the API server, for a desired
	// object whose live object the cache keeps lean (cache.IsLean: one
	// this engine does not track yet, made by another writer); nil
	// compares against the cache's answer as it is. A gone object is
	// (nil, nil).
	Fetch func(ctx context.Context, gvk schema.GroupVersionKind, key resource.Key) (*unstructured.Unstructured, error)
}

// Comparer compares apps' desired states with their destinations' live
// states. It keeps, per app, the Differ of its comparison options and the
// memo of its last comparison (memo.go). It is safe for concurrent use.
type Comparer struct {
	cfg Config
	// types are the built-in kinds' type trees every app's differ shares.
	types *diff.TypeCache
	// rules are the compiled jq ignore expressions every app's differ
	// shares.
	rules *diff.RuleCache
	// seed seeds the live fingerprints of refresh memos.
	seed maphash.Seed

	mu sync.Mutex
	// entries are the apps' differs and memos, by app key.
	entries map[string]*entry
	// bases are the built-in Differs by options key, forked for each app;
	// nil when the host builds its own (Config.NewDiffer).
	bases *lru.Cache[string, *diff.Differ]
}

// New returns the Comparer of cfg.
func New(cfg Config) *Comparer {
	c := &Comparer{
		cfg:     cfg,
		types:   diff.NewTypeCache(),
		rules:   diff.NewRuleCache(0),
		seed:    maphash.MakeSeed(),
		entries: map[string]*entry{},
	}
	if cfg.NewDiffer == nil {
		// A fleet's apps mostly share their comparison options: one
		// compiled Differ per set of options (a few KB each), forked per
		// app (a few hundred bytes). Evicting a base only stops new forks
		// from sharing it.
		c.bases, _ = lru.New[string, *diff.Differ](maxDifferBases)
	}
	return c
}

// standIn is a checker standing for another that may be replaced.
type standIn interface{ Current() health.Checker }

// checker returns the checker to judge with now (Config.Health).
func (c *Comparer) checker() health.Checker {
	if s, ok := c.cfg.Health.(standIn); ok {
		return s.Current()
	}
	return c.cfg.Health
}
