package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	gosync "sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/argocdcm"
	"github.com/kubegitops/gitops/examples/operator/controller"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Event reasons of the settings ConfigMaps. Each is written once per
// change of a ConfigMap (and once at start), naming every key it is
// about; a note longer than an Event holds is split over several.
const (
	// ReasonInvalidSetting (Warning): keys whose value is malformed; they
	// are left out, the rest apply.
	ReasonInvalidSetting = "InvalidSetting"
	// ReasonUnsupportedSetting (Warning): keys whose value asks for what
	// this program does not do (argocdcm.UseNotImplemented); they are left
	// out, the rest apply.
	ReasonUnsupportedSetting = "UnsupportedSetting"
	// ReasonUnusedSetting (Warning): keys that set nothing here, grouped
	// by why (another Argo CD component's, meaningless here, not
	// implemented, not an Argo CD key at all), every one named.
	ReasonUnusedSetting = "UnusedSetting"
	// ReasonRestartNeeded (Warning): changed argocd-cmd-params-cm keys that
	// take effect when the operator restarts, as Argo CD's components read
	// them when they start.
	ReasonRestartNeeded = "RestartNeeded"
)

// maxNote is the longest Event note written: the API server refuses
// notes past 1 kB.
const maxNote = 1000

// settingsNames are the ConfigMaps the operator reads from its namespace.
var settingsNames = []string{argocdcm.ConfigMapName, argocdcm.ParamsConfigMapName}

// settings are argocd-cm and argocd-cmd-params-cm of the operator's
// namespace: read at start into the engine's, the reconcilers' and the
// log's options, and watched. Every key applies as argocdcm's tables say:
// a change of argocd-cm applies at once (Engine.Settings().Reconfigure, the
// reconciler's timing, the destinations), as does a change of the
// argocd-cmd-params-cm keys the table marks live (the log, the metrics'
// labels, the self-heal backoff, the sync's settings, ...); the other keys
// of argocd-cmd-params-cm take effect at the next start, and a change of
// one is reported (RestartNeeded). Keys that are malformed, unsupported or
// unused are reported by name, once per change.
type settings struct {
	namespace string
	kube      kubernetes.Interface
	log       logr.Logger

	mu gosync.Mutex
	// data is the data of each ConfigMap as last applied; started as read
	// at start (the restart-only keys are those).
	data, started map[string]map[string]string
	cm            *argocdcm.Settings
	params        *argocdcm.Params
	// startParams are the params the operator started with.
	startParams *argocdcm.Params
	// inCluster is cm's cluster.inClusterEnabled.
	inCluster atomic.Bool

	// What the settings apply to, set by run before Start; reporting
	// turns the Events on.
	reporting  bool
	f          flags
	base       gitops.Options // argocdcm.Defaults and the command line
	engine     *gitops.Engine
	reconciler *controller.Reconciler
	logs       *logs
	metrics    *appMetrics
	clusters   *clusterSecrets
	apps       client.Reader
	queue      *controller.ClusterEvents
	// everyReplica runs the watch on every replica of a sharded group,
	// not only on the one holding the control Lease.
	everyReplica bool
}

// NeedLeaderElection is false for a sharded operator, whose every
// replica reconciles apps with these settings.
func (s *settings) NeedLeaderElection() bool { return !s.everyReplica }

// redisServer is argocd-cmd-params-cm's redis.server as the operator
// started with it: sharded replicas keep rendered manifests there when
// -redis-addr is not given.
func (s *settings) redisServer() string {
	return s.startParams.RedisServer
}

// loadSettings reads both ConfigMaps (a missing one is empty). Problems
// of their keys are reported once Start runs.
func loadSettings(ctx context.Context, kube kubernetes.Interface, namespace string, log logr.Logger) (*settings, error) {
	s := &settings{namespace: namespace, kube: kube, log: log.WithName("settings"),
		data: map[string]map[string]string{}, started: map[string]map[string]string{}}
	for _, name := range settingsNames {
		cm, err := kube.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("reading ConfigMap %s/%s: %w", namespace, name, err)
		}
		s.data[name], s.started[name] = cm.Data, cm.Data
	}
	s.cm, s.params = parseSettings(s.data)
	s.startParams = s.params
	s.inCluster.Store(inClusterOf(s.cm))
	return s, nil
}

// parseSettings parses both ConfigMaps' data, keeping the keys that parse.
func parseSettings(data map[string]map[string]string) (*argocdcm.Settings, *argocdcm.Params) {
	cm, _ := argocdcm.ParsePartial(data[argocdcm.ConfigMapName])
	params, _ := argocdcm.ParseParams(data[argocdcm.ParamsConfigMapName])
	return cm, params
}

// parseArgoCDCM parses argocd-cm's data as the operator applies it.
func parseArgoCDCM(data map[string]string) (*argocdcm.Settings, error) {
	return argocdcm.ParsePartial(data)
}

// engineOptions are the engine's options of cm and params over the base:
// argocd-cm's, then argocd-cmd-params-cm's (with its renderer limits),
// then the command line's -interval and -instance-id, which win.
func (s *settings) engineOptions(cm *argocdcm.Settings, params *argocdcm.Params) (gitops.Options, error) {
	opts := s.base
	c := *cm
	if c.Tools != nil {
		tools := *c.Tools
		params.ApplyTools(&tools)
		c.Tools = &tools
	}
	if err := c.Apply(&opts); err != nil {
		return opts, fmt.Errorf("ConfigMap %s/%s: %w", s.namespace, argocdcm.ConfigMapName, err)
	}
	params.Apply(&opts)
	if s.f.set["interval"] || cm.Reconciliation == 0 {
		opts.Interval = s.f.interval
	}
	if s.f.set["instance-id"] {
		opts.Tracking.InstanceID = s.f.instanceID
	}
	return opts, nil
}

// flags returns f with the settings' values for the flags not given on
// the command line: -interval from argocd-cm timeout.reconciliation
// (negative when it is 0: periodic refreshes off), -workers from
// controller.status.processors, -application-namespaces from
// application.namespaces, -instance-id from installationID.
func (s *settings) flags(f flags) flags {
	if r := s.cm.Reconciliation; r != 0 && !f.set["interval"] {
		f.interval = r
	}
	if n := s.params.StatusProcessors; n > 0 && !f.set["workers"] {
		f.workers = n
	}
	if ns := s.params.ApplicationNamespaces; len(ns) > 0 && !f.set["application-namespaces"] {
		f.appNamespaces = ns
	}
	if id := s.cm.InstallationID; id != "" && !f.set["instance-id"] {
		f.instanceID = id
	}
	f.params = s.params
	return f
}

// timing is the reconciler's timing of cm and params: timeout.reconciliation
// (unless -interval was given), timeout.hard.reconciliation, and the
// self-heal backoff of controller.self.heal.*.
func (s *settings) timing(cm *argocdcm.Settings, params *argocdcm.Params) controller.Timing {
	t := controller.Timing{Interval: s.f.interval, HardInterval: cm.HardReconciliation, SelfHealBackoff: params.SelfHealBackoff,
		RepoErrorGracePeriod: params.RepoErrorGracePeriod}
	if r := cm.Reconciliation; r != 0 && !s.f.set["interval"] {
		t.Interval = r
	}
	return t
}

// reconcilerOptions puts the settings' timing into the reconciler's
// options.
func (s *settings) reconcilerOptions(opts *controller.Options) {
	t := s.timing(s.cm, s.params)
	opts.HardInterval, opts.SelfHealBackoff, opts.RepoErrorGracePeriod = t.HardInterval, t.SelfHealBackoff, t.RepoErrorGracePeriod
}

// inClusterEnabled reports argocd-cm cluster.inClusterEnabled as in
// force (default true).
func (s *settings) inClusterEnabled() bool { return s.inCluster.Load() }

// hydratorSettings are argocd-cm's source hydrator keys in force.
func (s *settings) hydratorSettings() argocdcm.HydratorSettings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cm.Hydrator
}

func inClusterOf(c *argocdcm.Settings) bool { return c.InClusterEnabled == nil || *c.InClusterEnabled }

// Start reports what start found and watches both ConfigMaps until ctx
// ends (manager.Runnable).
func (s *settings) Start(ctx context.Context) error {
	factory := informers.NewSharedInformerFactoryWithOptions(s.kube, 0, informers.WithNamespace(s.namespace))
	inf := factory.Core().V1().ConfigMaps().Informer()
	changed := make(chan struct{}, 1)
	poke := func(obj any) {
		if u, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = u.Obj
		}
		if cm, ok := obj.(*corev1.ConfigMap); ok && slices.Contains(settingsNames, cm.Name) {
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: poke,
		UpdateFunc: func(_, obj any) { poke(obj) }, DeleteFunc: poke}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return ctx.Err()
	}
	s.reload(ctx, inf.GetStore(), true)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
			s.reload(ctx, inf.GetStore(), false)
		}
	}
}

// reload reads the ConfigMaps as the store holds them and, when they
// changed since last applied, applies them and reports, once, what each
// changed ConfigMap holds that does not apply (at start, first, it
// reports what start found).
func (s *settings) reload(ctx context.Context, store cache.Store, first bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	objs := map[string]*corev1.ConfigMap{}
	data := map[string]map[string]string{}
	for _, name := range settingsNames {
		if o, ok, _ := store.GetByKey(s.namespace + "/" + name); ok {
			objs[name] = o.(*corev1.ConfigMap)
			data[name] = objs[name].Data
		}
	}
	changed := map[string]bool{}
	for _, name := range settingsNames {
		if first || !maps.Equal(data[name], s.data[name]) {
			changed[name] = true
		}
	}
	if len(changed) == 0 {
		return
	}
	cmSettings, cmErr := argocdcm.ParsePartial(data[argocdcm.ConfigMapName])
	params, paramsErr := argocdcm.ParseParams(data[argocdcm.ParamsConfigMapName])
	if changed[argocdcm.ConfigMapName] {
		s.report(objs[argocdcm.ConfigMapName], argocdcm.ConfigMapName, cmErr, cmSettings.Ignored, cmSettings.Warnings)
	}
	if changed[argocdcm.ParamsConfigMapName] {
		s.report(objs[argocdcm.ParamsConfigMapName], argocdcm.ParamsConfigMapName, paramsErr, params.Ignored, params.Warnings)
		s.restartNeeded(objs[argocdcm.ParamsConfigMapName], data[argocdcm.ParamsConfigMapName])
	}
	if !maps.EqualFunc(data, s.data, maps.Equal) {
		if err := s.apply(ctx, cmSettings, params); err != nil {
			s.log.Error(err, "settings not applied; the ones in force stay")
			obj := objs[argocdcm.ConfigMapName]
			if obj == nil {
				obj = objs[argocdcm.ParamsConfigMapName]
			}
			s.event(obj, corev1.EventTypeWarning, ReasonInvalidSetting, "not applied, the settings in force stay: "+err.Error())
			s.data = data
			return
		}
	}
	s.data = data
}

// apply puts cm and params into what they set, while the operator runs.
func (s *settings) apply(ctx context.Context, cm *argocdcm.Settings, params *argocdcm.Params) error {
	if s.engine != nil {
		opts, err := s.engineOptions(cm, params)
		if err != nil {
			return err
		}
		reconnected, err := s.engine.Settings().Reconfigure(ctx, opts)
		if err != nil {
			return err
		}
		if len(reconnected) > 0 {
			s.log.Info("settings changed what the cluster caches watch: they list again", "clusters", reconnected)
		}
	}
	if s.reconciler != nil {
		s.reconciler.SetTiming(s.timing(cm, params))
	}
	if s.logs != nil {
		s.logs.Set(*params)
	}
	s.log.Info("settings applied", "configMaps", settingsNames)
	s.log.V(1).Info("settings in force", "ignoredSettings", len(cm.Ignored), "ignoredParams", len(params.Ignored))
	if s.metrics != nil {
		s.metrics.Set(params.Metrics)
	}
	flip := inClusterOf(cm) != inClusterOf(s.cm)
	s.cm, s.params = cm, params
	s.inCluster.Store(inClusterOf(cm))
	if flip && s.clusters != nil {
		if _, err := s.clusters.Reconcile(ctx, reconcile.Request{}); err != nil {
			s.log.Error(err, "destinations not updated for cluster.inClusterEnabled")
		}
	}
	s.refreshAll(ctx)
	return nil
}

// refreshAll queues every served Application for a reconcile.
func (s *settings) refreshAll(ctx context.Context) {
	if s.apps == nil || s.queue == nil {
		return
	}
	var list v1alpha1.ApplicationList
	if err := s.apps.List(ctx, &list); err != nil {
		s.log.Error(err, "listing Applications to reconcile them with the new settings")
		return
	}
	for _, app := range list.Items {
		s.queue.Requeue(types.NamespacedName{Namespace: app.Namespace, Name: app.Name})
	}
}
