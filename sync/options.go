package sync

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Options configure a Syncer. Start from DefaultOptions.
type Options struct {
	// FieldManager is the server-side apply field manager. Default "gitops".
	FieldManager string
	// ForceConflicts takes ownership of fields other managers own when
	// applying. Default true: desired state in Git is the authority, as with
	// Argo CD. Set false to fail on conflicts instead.
	ForceConflicts bool
	// ClientSideApply applies with a three-way merge against the
	// last-applied annotation (kubectl apply's way) instead of server-side
	// apply; an object's ServerSideApply=true annotation still chooses SSA.
	// Default false.
	ClientSideApply bool
	// ClientSideManagers are the field managers whose client-side apply
	// ownership is migrated to FieldManager before a server-side apply
	// (Argo's ClientSideApplyMigration). Default kubectl-client-side-apply and
	// FieldManager+"-client-side".
	ClientSideManagers []string
	// ApplyOutOfSyncOnly skips (neither dry-runs nor writes) objects that
	// Collaborators.InSync reports in sync, so a resync of an application in sync sends no
	// write at all. Default true; an application's or object's
	// ApplyOutOfSyncOnly=false option turns it off for them (Argo CD's
	// default is to apply everything). No effect without Collaborators.InSync.
	ApplyOutOfSyncOnly bool
	// ApplyParallelism bounds concurrent writes within one wave. Default 8.
	ApplyParallelism int
	// DryRunParallelism bounds concurrent server-side dry-runs. Default 16:
	// dry-runs write nothing, so they can go wider than applies.
	DryRunParallelism int
	// WaveTimeout bounds the wait for one wave (or one hook phase) to become
	// healthy. Default 10 minutes.
	WaveTimeout time.Duration
	// Timeout bounds the whole operation. Default 30 minutes (zero);
	// negative means none (Argo CD's controller.sync.timeout.seconds 0).
	Timeout time.Duration
	// WaveDelay is how long the operation waits after a wave (or hook
	// phase) is done and healthy, before the next one starts, so that
	// other controllers see the wave's changes first (Argo CD's
	// controller.sync.wave.delay.seconds, 2 s there). Default 0: none.
	WaveDelay time.Duration
	// PollInterval is how often waits look at the cluster. Default 250 ms.
	PollInterval time.Duration
	// WaitFinalWave waits for the last wave to become healthy before the
	// operation succeeds. Default true: Sync returns when the application
	// works, not merely when it was written (Argo CD does not wait).
	WaitFinalWave bool
	// PruneClusterScoped allows pruning cluster-scoped objects. Default
	// false: a deleted ClusterRole or Namespace affects more than one app.
	PruneClusterScoped bool
	// RecreateOnImmutable deletes and re-creates an object whose update is
	// refused for an immutable field, for every object; an object's own
	// Force=true does the same for that object alone. Default false.
	RecreateOnImmutable bool
	// OnProgress, when set, is called after each wave with the results so
	// far.
	OnProgress func(Progress)
}

// Progress is reported after each wave.
type Progress struct {
	// App is the application being synced.
	App string
	// Phase is the hook phase of the wave just done (PreSync, Sync, PostSync
	// or SyncFail).
	Phase string
	// Wave is the sync wave just done.
	Wave int
	// Final reports the last report of the operation.
	Final bool
	// Results has a row per object so far, in plan order.
	Results []ResourceResult
}

// DefaultOptions returns the options used when none are given.
func DefaultOptions() Options {
	return Options{
		FieldManager:       "gitops",
		ForceConflicts:     true,
		ApplyParallelism:   8,
		DryRunParallelism:  16,
		ApplyOutOfSyncOnly: true,
		WaveTimeout:        10 * time.Minute,
		Timeout:            30 * time.Minute,
		PollInterval:       250 * time.Millisecond,
		WaitFinalWave:      true,
	}
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.FieldManager == "" {
		o.FieldManager = d.FieldManager
	}
	if len(o.ClientSideManagers) == 0 {
		o.ClientSideManagers = []string{"kubectl-client-side-apply", o.FieldManager + "-client-side"}
	}
	if o.ApplyParallelism <= 0 {
		o.ApplyParallelism = d.ApplyParallelism
	}
	if o.DryRunParallelism <= 0 {
		o.DryRunParallelism = d.DryRunParallelism
	}
	if o.WaveTimeout <= 0 {
		o.WaveTimeout = d.WaveTimeout
	}
	if o.Timeout == 0 {
		o.Timeout = d.Timeout
	}
	if o.WaveDelay < 0 {
		o.WaveDelay = 0
	}
	if o.PollInterval <= 0 {
		o.PollInterval = d.PollInterval
	}
	return o
}

// Collaborators are what a Syncer asks or reports to, as opposed to the
// settings of Options: a host that embeds a syncer in something larger
// (the engine gives its cluster cache's lookups, its health checker and
// its tracking) passes them to New beside the settings, so no setting is
// ever silently replaced by its owner's. Every field may be left zero.
type Collaborators struct {
	// Tracking says where tracking ids go and which instance this is.
	// Default resource.DefaultTracking().
	Tracking resource.Tracking
	// Health judges resources after each wave and hooks without a
	// completion rule of their own. Nil: every object counts as healthy once
	// applied (no waiting).
	Health health.Checker
	// InSync reports whether an applied object already matches its desired
	// state; with ApplyOutOfSyncOnly it lets a sync skip writing it. Nil:
	// ApplyOutOfSyncOnly has no effect. A diff.Differ fits behind it.
	InSync func(ctx context.Context, desired, live *unstructured.Unstructured) (bool, error)
	// ManagedObjects returns the live objects that carry the app's tracking
	// id (a cluster cache's index answers this in O(the app's objects)). Nil:
	// the syncer lists every kind in the namespaces the app uses, which is
	// correct but slow on big clusters.
	ManagedObjects func(ctx context.Context, app string) ([]*unstructured.Unstructured, error)
	// Live, when set, returns an object as a watch-fed cache last saw it
	// (a cluster cache's Get): waits for health read it instead of asking
	// the API server every PollInterval. A cached object is believed only
	// when it is the object written (same UID) at or past the generation
	// written; an object the cache lacks, or holds as another object of
	// that name, is read from the API server as without Live. Nil: every
	// wait reads the API server.
	Live func(key resource.Key) (*unstructured.Unstructured, bool)
	// Absent, when set, reports that a watch-fed cache in sync does not
	// hold key (a cluster cache's Get missing). A sync then sends no GET
	// for that object before its server-side dry-run, whose answer tells
	// whether the object exists after all (then it is read, before any
	// write); the dry-run of every object still precedes every write. Only
	// objects applied server-side (not hooks, not Replace=true) are read so.
	// On a first sync this saves a GET per object. Nil: every object is
	// read before the dry-run.
	Absent func(key resource.Key) bool
	// Admit, when set, is asked about every object of the plan before the
	// dry-run and before any write: the objects to apply (prune false) and
	// the objects to prune (prune true). A refused object to apply fails the
	// operation with nothing written, naming every refused object; a refused
	// prune is skipped and reported. Project limits and policies live here.
	Admit func(ctx context.Context, obj *unstructured.Unstructured, namespaced, prune bool) error
	// Log receives what the syncer does, at V(1) per object. Default:
	// discarded.
	Log logr.Logger
	// Writes, when set, bounds the requests that change the cluster
	// (creates, applies, updates, deletes, and their server-side dry runs)
	// in flight at once, across every syncer given the same Limiter (Argo
	// CD's controller.kubectl.parallelism.limit). Nil: only
	// Options.ApplyParallelism and DryRunParallelism bound them, per
	// operation.
	Writes *Limiter
}

func (c Collaborators) withDefaults() Collaborators {
	if c.Tracking.AnnotationKey == "" {
		c.Tracking = resource.DefaultTracking()
	}
	if c.Log.GetSink() == nil {
		c.Log = logr.Discard()
	}
	return c
}
