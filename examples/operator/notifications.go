package main

import (
	"context"
	"fmt"
	"maps"
	"strings"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/notify"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// ReasonNotificationConfig is the reason of the Warning Event written on
// argocd-notifications-cm for each of its keys that was left out (a
// template that does not parse, a trigger that does not compile, a service
// missing its secret...), and for each field of a key that Argo CD
// ignores (the key loads without it); the message names the key.
const ReasonNotificationConfig = "InvalidNotificationConfig"

// ReasonNotificationFailed is the reason of the Warning Event written on
// an Application for each notification about it that was not delivered;
// the message names the trigger, template, destination and the service's
// error (never a secret). The notification is not recorded in the
// Application's notified annotation: the next evaluation of the
// Application (its next change, or a minute later) sends it again.
const ReasonNotificationFailed = "NotificationDeliveryFailed"

// notifier delivers Argo CD notifications as Argo CD's notifications
// controller does: from argocd-notifications-cm and
// argocd-notifications-secret of the operator's namespace, reloaded when
// either changes, it evaluates the triggers the Applications subscribe to
// each time the operator's cache sees an Application change (the status the
// reconciler writes), and keeps what it sent in the Application's
// notified.notifications.argoproj.io annotation, so a restart sends nothing
// again.
type notifier struct {
	ns       string
	kube     kubernetes.Interface
	apps     ctrlcache.Cache
	ctrl     *notify.Controller
	recorder record.EventRecorder
	log      logr.Logger

	active  atomic.Bool // argocd-notifications-cm exists and is loaded
	reload  chan struct{}
	version string // resourceVersions of the ConfigMap and Secret last loaded
	cm      toolscache.SharedInformer
	secret  toolscache.SharedInformer
}

// setupNotifications adds the notifier to mgr; it runs on the leader only.
// Its metrics are registered in reg, the run's own registry.
func setupNotifications(mgr manager.Manager, cfg *rest.Config, f flags, reg prometheus.Registerer, log logr.Logger) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	empty, err := notify.Load(nil, nil, notify.DefaultLoadOptions())
	if err != nil {
		return err
	}
	opts := notify.DefaultControllerOptions()
	opts.State = notify.NewAnnotationState(notify.DynamicAnnotations{Client: dyn})
	opts.Registerer = reg
	opts.Log = log
	n := &notifier{ns: f.namespace, kube: kube, apps: mgr.GetCache(),
		recorder: mgr.GetEventRecorderFor("gitops-notifications"), log: log, reload: make(chan struct{}, 1)}
	opts.OnFailure = n.failed
	if f.params != nil && f.params.Notifications.Processors > 0 {
		opts.Senders = f.params.Notifications.Processors // notificationscontroller.processors.count
	}
	if n.ctrl, err = notify.NewController(empty, opts); err != nil {
		return err
	}
	return mgr.Add(manager.RunnableFunc(n.run))
}

// run watches the configuration and the Applications and delivers until
// ctx ends.
func (n *notifier) run(ctx context.Context) error {
	n.cm = n.informer(&corev1.ConfigMap{}, "configmaps", notify.ConfigMapName)
	n.secret = n.informer(&corev1.Secret{}, "secrets", notify.SecretName)
	var wg gosync.WaitGroup
	defer wg.Wait()
	for _, inf := range []toolscache.SharedInformer{n.cm, n.secret} {
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { n.changed() },
			UpdateFunc: func(any, any) { n.changed() },
			DeleteFunc: func(any) { n.changed() },
		}); err != nil {
			return err
		}
		wg.Add(1)
		go func() { defer wg.Done(); inf.RunWithContext(ctx) }()
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), n.cm.HasSynced, n.secret.HasSynced) {
		return ctx.Err()
	}
	apps, err := n.apps.GetInformer(ctx, &v1alpha1.Application{})
	if err != nil {
		return fmt.Errorf("notifications: %w", err)
	}
	if _, err := apps.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    n.observe,
		UpdateFunc: func(_, obj any) { n.observe(obj) },
	}); err != nil {
		return fmt.Errorf("notifications: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- n.ctrl.Run(ctx) }()
	n.changed()
	for {
		select {
		case <-ctx.Done():
			return <-done
		case <-n.reload:
			if n.load() {
				n.observeAll(ctx)
			}
		}
	}
}

// informer watches the one object name of the operator's namespace.
func (n *notifier) informer(obj runtime.Object, resource, name string) toolscache.SharedInformer {
	lw := toolscache.NewListWatchFromClient(n.kube.CoreV1().RESTClient(), resource, n.ns, fields.OneTermEqualSelector("metadata.name", name))
	return toolscache.NewSharedInformer(lw, obj, 0)
}

// changed asks run to load the configuration again; it never blocks.
func (n *notifier) changed() {
	select {
	case n.reload <- struct{}{}:
	default:
	}
}

// load reads the ConfigMap and Secret from the informers and gives the
// controller their configuration, leaving out (and reporting) each bad key.
// It returns whether the configuration changed and is in use.
func (n *notifier) load() bool {
	obj, ok, _ := n.cm.GetStore().GetByKey(n.ns + "/" + notify.ConfigMapName)
	cm, _ := obj.(*corev1.ConfigMap)
	if !ok || cm == nil {
		if n.active.Swap(false) {
			n.log.Info("notifications off: the ConfigMap is gone", "configmap", n.ns+"/"+notify.ConfigMapName)
		}
		n.version = ""
		return false
	}
	var secret map[string]string
	version := cm.ResourceVersion + "/"
	if obj, ok, _ := n.secret.GetStore().GetByKey(n.ns + "/" + notify.SecretName); ok {
		if s, _ := obj.(*corev1.Secret); s != nil {
			secret, version = secretData(s), version+s.ResourceVersion
		}
	}
	if version == n.version {
		return false
	}
	n.version = version
	cfg, bad := loadNotificationConfig(cm.Data, secret)
	var left []string
	for _, b := range bad {
		left = append(left, b.key)
		n.log.Info("notifications: a key of the ConfigMap is left out", "configmap", n.ns+"/"+notify.ConfigMapName, "key", b.key, "error", b.err.Error())
		n.recorder.Eventf(cm, corev1.EventTypeWarning, ReasonNotificationConfig, "key %s left out: %v", b.key, b.err)
	}
	for _, e := range cfg.Ignored() {
		n.recorder.Eventf(cm, corev1.EventTypeWarning, ReasonNotificationConfig, "%v", e)
	}
	n.ctrl.SetConfig(cfg)
	n.active.Store(true)
	n.log.Info("notifications configuration loaded", "configmap", n.ns+"/"+notify.ConfigMapName,
		"triggers", cfg.Triggers(), "services", cfg.Services(), "leftOut", left)
	return true
}

// failed writes a Warning Event on the Application of a notification that
// was not delivered.
func (n *notifier) failed(key v1alpha1.AppKey, derr *notify.DeliveryError) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	app := &v1alpha1.Application{}
	if err := n.apps.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: key.Name}, app); err != nil {
		n.log.Info("notifications: no Event for a failed delivery", "app", key.String(), "error", err.Error())
		return
	}
	n.recorder.Eventf(app, corev1.EventTypeWarning, ReasonNotificationFailed, "%s", derr.Error())
}

// observe queues one Application of the cache for evaluation.
func (n *notifier) observe(obj any) {
	app, ok := obj.(*v1alpha1.Application)
	if !ok || !n.active.Load() {
		return
	}
	m, err := appstatus.Object(app, app.Status)
	if err != nil {
		n.log.Info("notifications: application not evaluated", "app", app.Namespace+"/"+app.Name, "error", err.Error())
		return
	}
	if !n.ctrl.Observe(m) {
		n.log.V(1).Info("notifications: queue full, change dropped", "app", app.Namespace+"/"+app.Name)
	}
}

// observeAll evaluates every Application again under a new configuration,
// as Argo CD's controller does on its next resync.
func (n *notifier) observeAll(ctx context.Context) {
	list := &v1alpha1.ApplicationList{}
	if err := n.apps.List(ctx, list); err != nil {
		n.log.Info("notifications: applications not listed", "error", err.Error())
		return
	}
	for i := range list.Items {
		n.observe(&list.Items[i])
	}
}

// badKey is a key of argocd-notifications-cm left out, and why.
type badKey struct {
	key string
	err error
}

// loadNotificationConfig is notify.Load that never refuses the whole
// ConfigMap: it leaves out each key Load finds bad (a template that does
// not parse, a service of an unknown type or missing its secret, a bad
// subscriptions or defaultTriggers key) and loads the rest again; Load
// itself skips the triggers that do not compile or send a template left
// out. Each key left out is returned with its error, which names no
// secret value.
func loadNotificationConfig(data, secret map[string]string) (*notify.Config, []badKey) {
	data = maps.Clone(data)
	var bad []badKey
	for {
		cfg, err := notify.Load(data, secret, notify.DefaultLoadOptions())
		if cfg != nil {
			for _, s := range cfg.Skipped() {
				bad = append(bad, badKey{key: "trigger." + s.Name, err: s})
			}
			return cfg, bad
		}
		removed := map[string]bool{}
		for _, e := range configErrors(err) {
			if e.Kind == "trigger" {
				continue // skipped by Load once the rest loads
			}
			k := configKey(data, e)
			if _, ok := data[k]; ok || removed[k] {
				delete(data, k)
				removed[k] = true
				bad = append(bad, badKey{key: k, err: e})
			}
		}
		if len(removed) == 0 {
			// Not an entry's error: nothing can be left out to load the rest.
			empty, _ := notify.Load(nil, nil, notify.DefaultLoadOptions())
			return empty, append(bad, badKey{key: "*", err: err})
		}
	}
}

// configErrors returns the *notify.ConfigError entries of a Load error.
func configErrors(err error) []*notify.ConfigError {
	if ce, ok := err.(*notify.ConfigError); ok {
		return []*notify.ConfigError{ce}
	}
	var out []*notify.ConfigError
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			out = append(out, configErrors(e)...)
		}
	case interface{ Unwrap() error }:
		out = configErrors(u.Unwrap())
	}
	return out
}

// configKey is the ConfigMap key of the entry e names.
func configKey(data map[string]string, e *notify.ConfigError) string {
	switch e.Kind {
	case "template":
		return "template." + e.Name
	case "subscription":
		return "subscriptions"
	case "service":
		for k := range data {
			rest, ok := strings.CutPrefix(k, "service.")
			if !ok {
				continue
			}
			typ, name, _ := strings.Cut(rest, ".")
			if name == "" {
				name = typ
			}
			if name == e.Name {
				return k
			}
		}
		return "service." + e.Name
	}
	return e.Name // "key": the key itself
}

// secretData is the Secret's values by key (data and stringData).
func secretData(s *corev1.Secret) map[string]string {
	out := make(map[string]string, len(s.Data)+len(s.StringData))
	for k, v := range s.Data {
		out[k] = string(v)
	}
	for k, v := range s.StringData {
		out[k] = v
	}
	return out
}
