package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	gosync "sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/argocdcm"
	"github.com/kubegitops/gitops/examples/operator/controller"
	"github.com/kubegitops/gitops/health"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Event reasons of the settings ConfigMaps.
const (
	// ReasonInvalidSetting: a key's value is malformed or asks for what
	// the engine does not do; the key is left out, the rest apply.
	ReasonInvalidSetting = "InvalidSetting"
	// ReasonUnusedSetting: a key the engine does not use (argocd-cm and
	// argocd-cmd-params-cm carry settings of Argo CD's other components).
	ReasonUnusedSetting = "UnusedSetting"
	// ReasonRestartNeeded: a changed key takes effect when the operator
	// restarts.
	ReasonRestartNeeded = "RestartNeeded"
)

// settingsNames are the ConfigMaps the operator reads from its namespace.
var settingsNames = []string{argocdcm.ConfigMapName, argocdcm.ParamsConfigMapName}

// settings are argocd-cm and argocd-cmd-params-cm of the operator's
// namespace: read at start into the engine's and the reconciler's
// options, and watched. A change of a health script
// (resource.customizations.health.<group_Kind>, the legacy
// resource.customizations health.lua) applies at once, through the
// swappable health checker given to the engine; any other changed key is
// reported (log line and RestartNeeded Event naming it) and applies when
// the operator restarts, since the engine's options are fixed at New.
// Bad keys are reported by name (log line and Warning Event on the
// ConfigMap) and left out; the rest apply.
type settings struct {
	namespace string
	kube      kubernetes.Interface
	log       logr.Logger
	health    *swapChecker

	cm     *argocdcm.Settings
	params *argocdcm.Params

	mu gosync.Mutex
	// data is the data of each ConfigMap as last seen; started as read
	// at start.
	data, started map[string]map[string]string
	recorder      events.EventRecorder
	// apps lists the served Applications and queue queues one, so that
	// a changed health script is judged again at once.
	apps  client.Reader
	queue *controller.ClusterEvents
	// everyReplica runs the watch on every replica of a sharded group,
	// not only on the elected one.
	everyReplica bool
}

// NeedLeaderElection is false for a sharded operator, whose every
// replica reconciles apps with these settings.
func (s *settings) NeedLeaderElection() bool { return !s.everyReplica }

// redisServer is argocd-cmd-params-cm's redis.server, the Redis Argo
// CD's components share; the operator keeps rendered manifests there
// when -redis-addr is not given.
func (s *settings) redisServer() string {
	return strings.TrimSpace(s.data[argocdcm.ParamsConfigMapName]["redis.server"])
}

// loadSettings reads both ConfigMaps (a missing one is empty). Problems
// of their keys are logged now and reported as Events once run starts.
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
	s.cm, s.params = s.parse(nil)
	checker, err := s.healthChecker(s.cm)
	if err != nil {
		return nil, err
	}
	s.health = &swapChecker{}
	s.health.c.Store(&checker)
	return s, nil
}

// parse parses the data last seen, reporting each problem by key (as an
// Event when recorder is set).
func (s *settings) parse(objs map[string]*corev1.ConfigMap) (*argocdcm.Settings, *argocdcm.Params) {
	cm, err := parseArgoCDCM(s.data[argocdcm.ConfigMapName])
	s.report(objs[argocdcm.ConfigMapName], argocdcm.ConfigMapName, err, cm.Warnings)
	params, err := argocdcm.ParseParams(s.data[argocdcm.ParamsConfigMapName])
	s.report(objs[argocdcm.ParamsConfigMapName], argocdcm.ParamsConfigMapName, err, params.Warnings)
	return cm, params
}

// parseArgoCDCM parses argocd-cm's data as the operator applies it;
// timeout.reconciliation 0 turns the periodic refresh off, as in Argo CD
// (a negative Reconciliation, which flags makes the interval).
func parseArgoCDCM(data map[string]string) (*argocdcm.Settings, error) {
	return argocdcm.ParsePartial(data)
}

// report logs each key's problem and, with a recorder and the object,
// records it as a Warning Event on the ConfigMap.
func (s *settings) report(obj *corev1.ConfigMap, name string, err error, warnings []string) {
	if obj == nil {
		return // at load: reported once the watch starts, with the object
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else if err != nil {
		errs = []error{err}
	}
	for _, e := range errs {
		s.log.Error(e, "setting left out", "configMap", s.namespace+"/"+name)
		s.event(obj, ReasonInvalidSetting, e.Error())
	}
	for _, w := range warnings {
		s.log.Info(w, "configMap", s.namespace+"/"+name)
		s.event(obj, ReasonUnusedSetting, w)
	}
}

func (s *settings) event(obj *corev1.ConfigMap, reason, note string) {
	if s.recorder != nil && obj != nil {
		s.recorder.Eventf(obj, nil, corev1.EventTypeWarning, reason, "LoadSettings", "%s", note)
	}
}

// healthChecker builds the health checker of cm's scripts, with
// argocdcm.Settings.Apply (its one home).
func (s *settings) healthChecker(cm *argocdcm.Settings) (health.Checker, error) {
	onlyHealth := &argocdcm.Settings{HealthOverrides: cm.HealthOverrides}
	var opts gitops.Options
	if err := onlyHealth.Apply(&opts); err != nil {
		return nil, err
	}
	if opts.Health == nil {
		return health.NewChecker(health.DefaultOptions())
	}
	return opts.Health, nil
}

// apply puts the settings into the engine's options, which start from
// argocdcm.Defaults: the health checker is the swappable one.
func (s *settings) apply(opts *gitops.Options) error {
	cm := *s.cm
	cm.HealthOverrides = nil
	if err := cm.Apply(opts); err != nil {
		return fmt.Errorf("ConfigMap %s/%s: %w", s.namespace, argocdcm.ConfigMapName, err)
	}
	s.params.Apply(opts)
	opts.Health = s.health
	return nil
}

// Start reports the problems found at start as Events and watches both
// ConfigMaps until ctx ends (manager.Runnable).
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

// reload parses the ConfigMaps as the store holds them, when they changed
// (or first, to report what start found): health scripts apply now, other
// changed keys are reported as needing a restart.
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
	if !first && maps.EqualFunc(data, s.data, maps.Equal) {
		return
	}
	s.data = data
	cm, params := s.parse(objs)
	checker, err := s.healthChecker(cm)
	if err != nil {
		s.log.Error(err, "health scripts not applied", "configMap", s.namespace+"/"+argocdcm.ConfigMapName)
		s.event(objs[argocdcm.ConfigMapName], ReasonInvalidSetting, err.Error())
	} else if !maps.Equal(cm.HealthOverrides, s.cm.HealthOverrides) {
		s.health.c.Store(&checker)
		s.refreshAll(ctx)
	}
	s.cm, s.params = cm, params
	for _, name := range settingsNames {
		for _, key := range changedKeys(s.started[name], data[name]) {
			if name == argocdcm.ConfigMapName && liveKey(key) {
				continue
			}
			msg := fmt.Sprintf("%s %s changed: it takes effect when the operator restarts", name, key)
			s.log.Info(msg, "configMap", s.namespace+"/"+name)
			s.event(objs[name], ReasonRestartNeeded, msg)
		}
	}
}

// liveKey reports whether an argocd-cm key applies without a restart.
func liveKey(key string) bool {
	return strings.HasPrefix(key, "resource.customizations.health.") || strings.HasPrefix(key, "resource.customizations.useOpenLibs.")
}

// changedKeys are the keys whose values differ between a and b, sorted.
func changedKeys(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// swapChecker is a health.Checker whose checker can be replaced while the
// engine runs.
type swapChecker struct {
	c atomic.Pointer[health.Checker]
}

// Check implements health.Checker.
func (w *swapChecker) Check(obj *unstructured.Unstructured) (*health.Status, error) {
	return (*w.c.Load()).Check(obj)
}

// CheckContext implements health.ContextChecker.
func (w *swapChecker) CheckContext(ctx context.Context, obj *unstructured.Unstructured) (*health.Status, error) {
	return health.CheckContext(ctx, *w.c.Load(), obj)
}

// flags returns f with the settings' values for the flags not given on
// the command line: -interval from argocd-cm timeout.reconciliation
// (negative when it is 0: periodic refreshes off),
// -workers from controller.status.processors, -application-namespaces
// from application.namespaces.
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
	return f
}

// reconcilerOptions puts controller.self.heal.timeout.seconds and
// argocd-cm timeout.hard.reconciliation into the reconciler's options.
func (s *settings) reconcilerOptions(opts *controller.Options) {
	opts.HardInterval = s.cm.HardReconciliation
	if d := s.params.SelfHealTimeout; d > 0 {
		opts.SelfHealTimeout = d
	}
}

// refreshAll queues every served Application for a reconcile.
func (s *settings) refreshAll(ctx context.Context) {
	if s.apps == nil || s.queue == nil {
		return
	}
	var list v1alpha1.ApplicationList
	if err := s.apps.List(ctx, &list); err != nil {
		s.log.Error(err, "listing Applications to judge their health again")
		return
	}
	for _, app := range list.Items {
		s.queue.Requeue(types.NamespacedName{Namespace: app.Namespace, Name: app.Name})
	}
}
