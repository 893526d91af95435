package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/argocdcm"
	"github.com/kubegitops/gitops/cache/store/redisstore"
	"github.com/kubegitops/gitops/examples/operator/config"
	"github.com/kubegitops/gitops/examples/operator/controller"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/shard"
	"github.com/kubegitops/gitops/source/repocreds"
	"github.com/kubegitops/gitops/state"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:])
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "operator:", err)
		os.Exit(1)
	}
}

// errLeaseLost ends the operator when another took its Lease.
var errLeaseLost = errors.New("lost the Lease: another operator holds it")

// run builds the engine and the manager and runs them until ctx ends. It
// writes nothing before it holds what it needs: its ports (a second
// operator on the same addresses fails here, having written nothing), the
// Lease (unsharded) or a namespace no operator outside its group holds
// (sharded), and, for each controller, its synced cache (see startup.go
// and shards.go).
func run(ctx context.Context, args []string) error { return runWith(ctx, args, os.Stderr) }

// runWith is run with the log written to logOut.
func runWith(ctx context.Context, args []string, logOut io.Writer) error {
	f, err := parseFlags(args)
	if err != nil {
		return err
	}
	var verbosity *int
	if f.set["v"] {
		verbosity = &f.verbosity
	}
	logs := newLogs(logOut, verbosity)
	log := logs.Logger(logController)
	ep, err := bindEndpoints(f.metrics, f.probes)
	if err != nil {
		return err
	}
	defer ep.close()
	cfg, err := restConfig(f.kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	identity := memberName(f.shardID)
	// Every operator says, in its log and a Warning Event on the Lease,
	// when another operator keeps it from acting (quietly with
	// -leader-elect, unsharded).
	watch, stopWatch, err := newControlWatch(kube, f.namespace, identity, log.WithName("control"))
	if err != nil {
		return err
	}
	defer stopWatch()
	if f.leaderElect && !f.sharded() {
		watch.quiet = true
	}
	var members *shard.Membership
	if f.sharded() {
		// A sharded replica runs beside the other members of its group,
		// never beside an operator outside it.
		if members, err = newMembership(cfg, f, identity, log.WithName("shard")); err != nil {
			return err
		}
		watch.members = members
		log.Info("sharing the Applications with the other operators of the group", "group", f.shardGroup, "member", identity, "namespace", f.namespace)
		if err := watch.waitForGroup(ctx); err != nil {
			return err
		}
	} else {
		lost, err := holdLease(ctx, kube, f.namespace, identity, watch, log)
		if err != nil {
			return err
		}
		go func() {
			select {
			case <-lost:
				cancel(errLeaseLost)
			case <-ctx.Done():
			}
		}()
	}
	st, err := loadSettings(ctx, kube, f.namespace, log)
	if err != nil {
		return err
	}
	logs.Set(*st.params)
	f = st.flags(f)
	// argocd-cmd-params-cm's client settings apply to every client from
	// here on, as to Argo CD's controller's.
	cfg = st.params.Client.RESTConfig(cfg)
	if kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	st.kube = kube
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), apiextensionsv1.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		return err
	}
	if f.installCRD {
		c, err := client.New(cfg, client.Options{Scheme: scheme})
		if err != nil {
			return err
		}
		if err := config.Install(ctx, c, time.Minute); err != nil {
			return err
		}
	}
	creds, err := loadRepoSecrets(ctx, kube, f.namespace, log)
	if err != nil {
		return err
	}
	decryptor, err := sopsDecryptor(ctx, kube, f, log.WithName("sops"))
	if err != nil {
		return err
	}
	events := controller.NewClusterEvents(f.namespace)
	st.f = f
	if f.redisAddr == "" && members != nil {
		f.redisAddr = st.redisServer()
	}
	// The run's metrics live in a registry of its own, so that two
	// operators in one process (tests, a host embedding it) never clash;
	// its endpoint serves them with controller-runtime's.
	own := prometheus.NewRegistry()
	engine, closeRedis, err := newEngine(cfg, f, events, log, st, creds, decryptor, own)
	if err != nil {
		return err
	}
	defer closeRedis()
	defer engine.Close()
	gpg, err := loadGnuPGKeys(ctx, kube, f.namespace, engine, log)
	if err != nil {
		return err
	}
	mo := manager.Options{
		Scheme: scheme,
		Logger: log,
		Cache:  cache.Options{DefaultNamespaces: controller.CacheNamespaces(f.namespace, f.appNamespaces)},
		// The endpoints are the operator's own, bound before anything
		// else (startup.go).
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Controller names are unique per manager; a process may run the
		// operator again after the last one ended (tests restart it).
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
	}
	if members != nil {
		// Sharded, the member holding the Lease runs what runs once
		// (ApplicationSets, notifications, image updates, hydration);
		// every member runs its share of the apps (shards.go).
		mo.LeaderElection, mo.LeaderElectionID, mo.LeaderElectionNamespace = true, LeaseName, f.namespace
		mo.LeaderElectionResourceLockInterface = leaseLock(kube, f.namespace, identity)
		mo.LeaderElectionReleaseOnCancel = true
	}
	mgr, err := manager.New(cfg, mo)
	if err != nil {
		return err
	}
	st.metrics = newAppMetrics(mgr.GetCache(), f.namespace, log.WithName("metrics"))
	st.metrics.Set(st.params.Metrics)
	if err := own.Register(st.metrics); err != nil {
		return err
	}
	ep.serve(ctx, prometheus.Gatherers{ctrlmetrics.Registry, own}, st.params.Profile, log)
	st.reporting, st.apps, st.queue, st.logs, st.engine = true, mgr.GetClient(), events, logs, engine
	st.everyReplica = members != nil
	if err := mgr.Add(st); err != nil {
		return err
	}
	gpg.recorder, gpg.everyReplica = mgr.GetEventRecorderFor("gitops-operator"), members != nil
	if err := mgr.Add(gpg); err != nil {
		return err
	}
	if members != nil {
		if err := mgr.Add(watch); err != nil {
			return err
		}
		if err := mgr.Add(forgetMembers(members, shard.DefaultOptions().LeaseDuration, log.WithName("shard"))); err != nil {
			return err
		}
	}
	if err := mgr.Add(onEveryReplica(func(ctx context.Context) error {
		if mgr.GetCache().WaitForCacheSync(ctx) {
			ep.ready.Store(true)
		}
		return nil
	})); err != nil {
		return err
	}
	opts := controller.DefaultOptions()
	opts.Engine, opts.Events, opts.Interval, opts.MaxConcurrentReconciles = engine, events, f.interval, f.workers
	opts.TreeWriteDelay = f.treeWriteDelay
	opts.Log = log.WithName("application")
	var placement *byCluster
	if members != nil {
		opts.Sharder, opts.Identity = watch, identity
		plog := log.WithName("placement")
		warn := func(reason, msg string) {
			plog.Info(msg)
			watch.recorder.Event(&corev1.ObjectReference{APIVersion: "coordination.k8s.io/v1", Kind: "Lease", Namespace: f.namespace, Name: LeaseName},
				corev1.EventTypeWarning, reason, msg)
		}
		if alg, n, self, ok := byClusterSettings(f, st.params.ShardingAlgorithm, identity, plog, warn); ok {
			p := &byCluster{reader: mgr.GetCache(), cache: mgr.GetCache(), namespace: f.namespace, algorithm: alg, replicas: n, self: self,
				inClusterEnabled: st.inClusterEnabled, gate: watch, log: plog, notify: make(chan struct{}, 1)}
			if f.dynamic {
				if p.dynamic, err = newDynamicShard(ctx, kube, f.namespace, identity, f.controllerShard, watch.recorder, plog.WithName("dynamic")); err != nil {
					return err
				}
				p.dynamic.changed = p.poke
				if err := mgr.Add(p.dynamic); err != nil {
					return err
				}
				n, _ = p.dynamic.current()
			} else {
				p.claims = &replicaClaims{kube: kube, namespace: f.namespace, group: f.shardGroup, self: identity, number: self,
					period: shard.DefaultOptions().RetryPeriod, recorder: watch.recorder, log: plog.WithName("replica"), changed: p.poke}
				if err := mgr.Add(p.claims); err != nil {
					return err
				}
			}
			if err := mgr.Add(p); err != nil {
				return err
			}
			opts.Sharder, placement = p, p
			log.Info("placing apps by cluster as Argo CD does", "algorithm", alg, "replicas", n, "replica", self, "dynamic", f.dynamic)
		}
	}
	st.reconcilerOptions(&opts)
	// The AppProjects of -namespace are the engine's projects, as Argo
	// CD's are those of its namespace; on a cluster that does not serve
	// the kind (-install-crd=false), only the implicit default project
	// exists, and the log says so.
	var projects *controller.Projects
	if _, err := mgr.GetRESTMapper().RESTMapping(schema.GroupKind{Group: v1alpha1.Group, Kind: v1alpha1.AppProjectKind}, v1alpha1.Version); err == nil {
		projects = &controller.Projects{Engine: engine, Namespace: f.namespace, Reader: mgr.GetCache(),
			Recorder: mgr.GetEventRecorderFor("gitops-operator")}
		opts.Projects = projects
	} else if meta.IsNoMatchError(err) {
		log.Info("appprojects.argoproj.io is not served: only the implicit default project exists; install the CRD and restart to use AppProjects")
	} else {
		return fmt.Errorf("look up the AppProject kind: %w", err)
	}
	r, err := controller.New(mgr.GetClient(), opts)
	if err != nil {
		return err
	}
	st.reconciler = r
	if members != nil {
		if err := own.Register(newShardMetrics(identity, r.ShardStats, members, placement)); err != nil {
			return err
		}
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return err
	}
	if st.clusters, err = setupClusterSecrets(mgr, engine, events, cfg, f, st.inClusterEnabled, log); err != nil {
		return err
	}
	if err := setupRepoSecrets(mgr, kube, creds, f, log); err != nil {
		return err
	}
	if err := setupImageUpdates(mgr, engine, creds, cfg, f, log); err != nil {
		return err
	}
	if err := setupHydrations(mgr, engine, creds, st, f, log); err != nil {
		return err
	}
	if f.appSets {
		if err := setupAppSets(mgr, engine, projects, f, logs.Logger(logAppSets)); err != nil {
			return err
		}
	}
	if f.notifications {
		if err := setupNotifications(mgr, cfg, f, own, logs.Logger(logNotifications).WithName("notifications")); err != nil {
			return err
		}
	}
	err = mgr.Start(ctx)
	if cause := context.Cause(ctx); errors.Is(cause, errLeaseLost) {
		return cause
	}
	return err
}

// newEngine builds the engine with one destination, the operator's own
// cluster, whose changes reach the controller through events; the cluster
// Secrets of -namespace are added once the manager runs (clusterSecrets).
// Repository credentials are read from creds, which the repository Secrets
// of -namespace keep current (repoSecrets).
// SOPS files are decrypted by decryptor, when set. The engine's metrics
// are registered in reg, the run's own registry.
// Sharded with a Redis address, rendered manifests are kept in that Redis;
// closeRedis closes its client.
func newEngine(cfg *rest.Config, f flags, events *controller.ClusterEvents, log logr.Logger, st *settings, creds *repocreds.Live, decryptor render.Decryptor, reg prometheus.Registerer) (e *gitops.Engine, closeRedis func(), err error) {
	closeRedis = func() {}
	base := argocdcm.Defaults()
	base.ProjectCredentials = creds.ForProject
	base.Decryptor = decryptor
	base.NewClusterCache = events.NewClusterCache
	base.Interval = f.interval
	base.Registerer = reg
	base.Log = log.WithName("engine")
	// Applications of -namespace are known by their bare names; the
	// events bridge maps tracking ids back to Applications by this rule.
	base.ControlNamespace = f.namespace
	if f.stateNamespace != "" {
		base.State = state.NewConfigMapStore(st.kube, f.stateNamespace)
	}
	if f.redisAddr != "" {
		// Replicas share rendered manifests: an app that moves is not
		// rendered again by its new owner.
		rc := redis.NewClient(&redis.Options{Addr: f.redisAddr})
		base.RenderStore = redisstore.New(rc, redisstore.DefaultOptions())
		closeRedis = func() { _ = rc.Close() }
	}
	st.base = base
	opts, err := st.engineOptions(st.cm, st.params)
	if err != nil {
		closeRedis()
		return nil, func() {}, err
	}
	// The cluster the operator runs in, unless argocd-cm
	// cluster.inClusterEnabled is false; the cluster Secrets are added
	// once the manager runs (clusterSecrets).
	opts.Clusters = []gitops.ClusterConfig{{Name: v1alpha1.KubernetesInClusterName, Server: v1alpha1.KubernetesInternalAPIServerAddr, Config: cfg}}
	if !st.inClusterEnabled() {
		// The engine needs a destination to start; an offline one (no
		// configuration) that no app can reach stands in.
		opts.Clusters[0].Config = nil
	}
	if e, err = gitops.New(opts); err != nil {
		closeRedis()
		return nil, func() {}, err
	}
	return e, closeRedis, nil
}
