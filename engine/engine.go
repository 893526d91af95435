package engine

import (
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/autosync"
	"github.com/kubegitops/gitops/engine/internal/clusters"
	"github.com/kubegitops/gitops/engine/internal/desired"
	"github.com/kubegitops/gitops/engine/internal/metrics"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/source/integrity"
	"k8s.io/client-go/util/workqueue"
)

// The Engine and the state it keeps. The package's other files work on
// these types and the accessors below, and this file refers to none of
// them: the files depend on each other in layers, not in a circle
// (internal/filegraph measures it, internal/layers holds the budget).

// Engine reconciles Applications: it renders their desired state, compares
// it with the live state of their destination, judges health, and syncs. It
// is safe for concurrent use.
type Engine struct {
	// Ops are the one-step operations a pipeline or a portal calls
	// (Refresh, Sync, Render, Delete, ...); their methods are the
	// Engine's own.
	Ops

	// opts are the options New was given; the live ones (Reconfigure) are
	// those of live.
	opts Options
	// live are the parts built from the options Reconfigure may change;
	// reconfigureMu serialises Reconfigure.
	live          atomic.Pointer[liveParts]
	reconfigureMu gosync.Mutex
	// sources, tools and renderer are the desired-state part
	// (newDesired): the renderer caches renders of tools, whose renderers
	// Reconfigure replaces.
	sources  *desired.Sources
	tools    *liveTools
	renderer render.Renderer
	// health judges resources: Options.Health, replaced by Reconfigure.
	health *liveChecker
	// forkDiffers says the engine builds its own Differs
	// (Options.NewDiffer was not set).
	forkDiffers bool
	metrics     *metrics.Set
	syncSem     chan struct{}

	// clusters are the destinations (Options.Clusters, then SetClusters).
	clusters *clusters.Set
	// views are the comparison's views of connected clusters, by
	// *clusterState (compareView).
	views    gosync.Map
	mu       gosync.Mutex
	projects *projectSet // Options.Projects, then SetProjects
	// integrity verifies sources against Options.GnuPGKeys, then
	// SetGnuPGKeys.
	integrity *integrity.Verifier
	runner    *runner // set while Run runs
	// hints are OnHint's subscribers.
	hints hintSubscribers
	// statuses are OnStatus's subscribers.
	statuses statusSubscribers
	// stateMu serialises the load-modify-save of app state records.
	stateMu gosync.Mutex
	// ops are the sync operations Terminate can reach.
	ops runningOps
}

// Ops are the one-step operations: each does one thing for one app and
// returns (Refresh, HardRefresh, Sync, Render, RenderManifests,
// ResourceTree, LiveObject, Actions, RunAction, Delete, Rollback, Resume,
// Terminate, History, LastOperation, SourceType, RevisionMetadata,
// CheckSync, CheckApplication). A pipeline, a portal or an operator that
// drives its own loop needs nothing else. The Engine embeds them: call
// them on the Engine.
type Ops struct{ e *Engine }

// Apps are the live set Run manages, as a controller and the add-ons
// (ApplicationSets, notifications, the image updater) work with it:
// adding and removing apps while Run runs, reading their last status,
// subscribing to changes, and telling the engine a repository changed.
// Engine.Apps returns them.
type Apps struct{ e *Engine }

// Settings are the options that change while the engine runs, as a host
// that watches Argo CD's ConfigMaps and Secrets applies them: the live
// options, clusters, projects and GnuPG keys. Engine.Settings returns
// them.
type Settings struct{ e *Engine }

// Sources are the engine's readers of repositories, for an add-on that
// reads them as the engine does (with the same credentials, caches and
// chart dependencies). Engine.Sources returns them.
type Sources struct{ e *Engine }

// Apps returns the live set Run manages.
func (e *Engine) Apps() Apps { return Apps{e} }

// Settings returns the settings that change while the engine runs.
func (e *Engine) Settings() Settings { return Settings{e} }

// Sources returns the engine's readers of repositories.
func (e *Engine) Sources() Sources { return Sources{e} }

// parts returns the live parts in force.
func (e *Engine) parts() *liveParts { return e.live.Load() }

// instanceOf is instanceName of app's key.
func (e *Engine) instanceOf(app *Application) string {
	return e.instanceName(v1alpha1.KeyOf(app))
}

// instanceName is how the engine knows an app inside, as Argo CD's apps
// in any namespace do: the bare name for an Application of the control
// namespace (Options.ControlNamespace) or of no namespace,
// "<namespace>_<name>" for one of any other namespace. An underscore is
// never part of a namespace or an Application name, so two apps of one
// name in two namespaces never share it. It is the app's tracking id on
// the objects it manages and its key in Options.State; the methods that
// name an app take its v1alpha1.AppKey and find it by this name.
func (e *Engine) instanceName(key v1alpha1.AppKey) string {
	if key.Namespace == "" || key.Namespace == e.opts.ControlNamespace {
		return key.Name
	}
	return key.Namespace + "_" + key.Name
}

// runner is the state of Run: the managed apps, their last status and the
// memory automated sync needs.
type runner struct {
	e     *Engine
	queue workqueue.TypedRateLimitingInterface[string]
	// syncs are the automated syncs in flight; Run waits for them.
	syncs gosync.WaitGroup

	mu         gosync.Mutex
	apps       map[string]*appState
	subscribed map[*clusterState]bool
	// parents are the apps whose last render held Applications (app of
	// apps): only their reconciles scan apps for children to drop.
	parents map[string]bool
	// owned are the top-level apps the Sharder gives this replica; nil
	// without a Sharder (every app is owned).
	owned map[string]bool
}

// appState is what Run keeps of one app between its reconciles.
type appState struct {
	app      *Application
	parent   string // the app whose render holds this one (app of apps)
	status   appstatus.Status
	hasState bool
	// good is the status of the last refresh that made its comparison;
	// it is kept through failures that say nothing of the live state.
	good    appstatus.Status
	hasGood bool
	// auto remembers the last automated sync (autosync.Decide's record);
	// nil before the first.
	auto *autosync.Record
	// resumeChecked records that Resume ran before the app's first
	// refresh.
	resumeChecked bool
	// hardAt is when the app last had a hard refresh, or joined Run
	// (Options.HardInterval).
	hardAt time.Time
	// syncing is set while an automated sync of the app runs.
	syncing bool
	// healNoted is the self-heal (revision and attempt) whose backoff was
	// last announced (NotifySelfHealBackoff), so each is announced once.
	healNoted string
}

// projectSet holds the engine's projects, which SetProjects replaces
// while the engine runs.
type projectSet struct {
	mu      gosync.RWMutex
	byName  map[string]*Project
	refused map[string]error
}

// subscribers are the functions an On* method registered, by id. Each set
// is guarded by Engine.mu; calls are made outside it (snapshot).
type subscribers[F any] struct {
	next uint64
	fns  map[uint64]F
}

// hintSubscribers are the functions OnHint registered.
type hintSubscribers = subscribers[func(repoURL string)]

// statusSubscribers are the functions OnStatus registered.
type statusSubscribers = subscribers[func(key v1alpha1.AppKey, st appstatus.Status)]

// runningOps are the sync operations running in an engine, by app, so
// that Terminate can reach them.
type runningOps struct {
	mu  gosync.Mutex
	ops map[string]*runningOp
}

type runningOp struct {
	terminate chan struct{}
	once      gosync.Once
}

// clusterState is one destination: its configuration and, once connected,
// its cache and syncers (engine/internal/clusters).
type clusterState = clusters.Cluster
