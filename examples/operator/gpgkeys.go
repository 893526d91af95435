package main

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/source/integrity"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

// ReasonInvalidGnuPGKey: an entry of argocd-gpg-keys-cm cannot be read (its
// name is not the ID of the one public key it holds); it is left out and
// the other keys apply.
const ReasonInvalidGnuPGKey = "InvalidGnuPGKey"

// gnupgKeys keeps the engine's GnuPG keys (gitops.Engine.Settings().SetGnuPGKeys)
// equal to argocd-gpg-keys-cm of the operator's namespace, as Argo CD's
// repo server keeps its keyring: read before the first reconcile,
// watched, and a change applied at once, without a restart (the apps of
// projects that verify signatures are refreshed). A missing ConfigMap
// holds no key. An entry that cannot be read is reported (a log line, and
// a Warning Event naming it on the ConfigMap) and left out; the other keys
// apply.
type gnupgKeys struct {
	namespace string
	kube      kubernetes.Interface
	engine    *gitops.Engine
	log       logr.Logger
	recorder  record.EventRecorder
	// data is the ConfigMap's data last applied.
	data map[string]string
	// everyReplica runs the watch on every replica of a sharded group,
	// each of which verifies commits with these keys.
	everyReplica bool
}

// NeedLeaderElection is false for a sharded operator (every replica
// keeps its engine's keys current), else true.
func (g *gnupgKeys) NeedLeaderElection() bool { return !g.everyReplica }

// loadGnuPGKeys reads argocd-gpg-keys-cm and gives its keys to the engine.
func loadGnuPGKeys(ctx context.Context, kube kubernetes.Interface, namespace string, engine *gitops.Engine, log logr.Logger) (*gnupgKeys, error) {
	g := &gnupgKeys{namespace: namespace, kube: kube, engine: engine, log: log.WithName("gnupg")}
	cm, err := kube.CoreV1().ConfigMaps(namespace).Get(ctx, integrity.ConfigMapName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		cm = nil
	case err != nil:
		return nil, fmt.Errorf("reading ConfigMap %s/%s: %w", namespace, integrity.ConfigMapName, err)
	}
	g.apply(cm)
	return g, nil
}

// apply gives the keys of cm (nil: none) to the engine and reports the
// entries left out.
func (g *gnupgKeys) apply(cm *corev1.ConfigMap) {
	var data map[string]string
	if cm != nil {
		data = cm.Data
	}
	g.data = maps.Clone(data)
	err := g.engine.Settings().SetGnuPGKeys(data)
	g.log.Info("GnuPG keys loaded", "configMap", g.namespace+"/"+integrity.ConfigMapName, "keys", g.engine.Settings().GnuPGKeyIDs())
	var bad interface{ Unwrap() []error }
	if !errors.As(err, &bad) {
		return
	}
	for _, e := range bad.Unwrap() {
		g.log.Error(e, "GnuPG key left out", "configMap", g.namespace+"/"+integrity.ConfigMapName)
		if g.recorder != nil && cm != nil {
			g.recorder.Event(cm, corev1.EventTypeWarning, ReasonInvalidGnuPGKey, e.Error())
		}
	}
}

// Start watches argocd-gpg-keys-cm until ctx ends (manager.Runnable): the
// keys as the watch first sees them (with Events for the entries left
// out), then every change.
func (g *gnupgKeys) Start(ctx context.Context) error {
	factory := informers.NewSharedInformerFactoryWithOptions(g.kube, 0, informers.WithNamespace(g.namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", integrity.ConfigMapName).String()
		}))
	inf := factory.Core().V1().ConfigMaps().Informer()
	changed := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case changed <- struct{}{}:
		default:
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
	g.reload(inf.GetStore(), true)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
			g.reload(inf.GetStore(), false)
		}
	}
}

// reload applies the ConfigMap as the store holds it, when its data
// changed (or first, to report what start found).
func (g *gnupgKeys) reload(store cache.Store, first bool) {
	var cm *corev1.ConfigMap
	if o, ok, _ := store.GetByKey(g.namespace + "/" + integrity.ConfigMapName); ok {
		cm = o.(*corev1.ConfigMap)
	}
	var data map[string]string
	if cm != nil {
		data = cm.Data
	}
	if !first && maps.Equal(data, g.data) {
		return
	}
	g.apply(cm)
}
