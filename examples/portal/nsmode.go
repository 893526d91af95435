package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/source/repocreds"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// appSetTopic is the list broker's topic of the ApplicationSets'
// changes (namespace mode).
const appSetTopic = "appsets"

// nsSyncTimeout bounds the first listing of the namespace's objects.
const nsSyncTimeout = 2 * time.Minute

// argoSecretTypes are the Secrets of the namespace the portal reads:
// Argo CD's repositories, repository credential templates and clusters.
const argoSecretTypes = engine.ClusterSecretTypeLabel + " in (repository,repo-creds,cluster)"

// Argo CD's ConfigMaps the portal reads besides argocd-rbac-cm.
const (
	argocdTLSCertsCM   = "argocd-tls-certs-cm"
	argocdKnownHostsCM = "argocd-ssh-known-hosts-cm"
)

// appProjectGVK is read unstructured, so that the model's strict loader
// sees and refuses by name a field the engine does not implement.
var appProjectGVK = schema.GroupVersionKind{Group: v1alpha1.Group, Version: v1alpha1.Version, Kind: v1alpha1.AppProjectKind}

// nsBackend serves the Argo CD namespace an operator serves (--namespace):
// its Applications, ApplicationSets, AppProjects, and repository and
// cluster Secrets are read from the API server and watched; the apps'
// status is what the operator writes; edits, creations, deletions, syncs,
// rollbacks, terminations and refreshes are written to the Application
// objects as Argo CD's API server writes them (nswrite.go).
type nsBackend struct {
	ns    string
	cl    client.Client
	cache cache.Cache
	kube  kubernetes.Interface
	// inCluster reaches the cluster a Secret of the in-cluster address
	// without credentials names.
	inCluster *rest.Config
	// base are the kubeconfig's clusters, the cluster Secrets' merged over.
	base  []gitops.ClusterConfig
	creds *repocreds.Live
	log   io.Writer
	// appSets is false when the cluster does not serve ApplicationSets.
	appSets bool
	// stop ends the watches.
	stop context.CancelFunc

	// srv, engine and authz are set by attach, once the portal is built.
	srv    *server
	engine *gitops.Engine
	authz  *argoRBAC

	// projects are the AppProjects as last read (settings pages), and
	// refused those that did not load, by name.
	projects atomic.Pointer[projectSet]
	// argocdCM is argocd-cm's data as last read (exec settings).
	argocdCM atomic.Pointer[map[string]string]

	// mu guards changed: per app, a channel closed (and replaced) at each
	// change of the Application, for the waits of nswrite.go.
	mu      gosync.Mutex
	changed map[string]chan struct{}
}

// projectSet is the namespace's AppProjects, those that loaded and those
// refused with why.
type projectSet struct {
	loaded  []gitops.Project
	refused map[string]error
}

// openNamespace starts watching namespace ns through cfg (the
// kubeconfig's first cluster) and reads what the engine needs before it
// is built: the Applications, the AppProjects, the cluster Secrets
// (merged over base) and the repository Secrets. A namespace without the
// Application CRD is an error naming it.
func openNamespace(ctx context.Context, cfg *rest.Config, kube kubernetes.Interface, ns string, base []gitops.ClusterConfig, log io.Writer) (*nsBackend, error) {
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		return nil, err
	}
	secrets, err := labels.Parse(argoSecretTypes)
	if err != nil {
		return nil, err
	}
	c, err := cache.New(cfg, cache.Options{Scheme: scheme, DefaultNamespaces: map[string]cache.Config{ns: {}},
		ByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: {Label: secrets}}})
	if err != nil {
		return nil, fmt.Errorf("--namespace %s: %w", ns, err)
	}
	cl, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("--namespace %s: %w", ns, err)
	}
	b := &nsBackend{ns: ns, cl: cl, cache: c, kube: kube, inCluster: cfg, base: base, creds: &repocreds.Live{}, log: log,
		changed: map[string]chan struct{}{}, appSets: true}
	sctx, cancel := context.WithTimeout(ctx, nsSyncTimeout)
	defer cancel()
	b.stop = func() {}
	for _, obj := range []client.Object{&v1alpha1.Application{}, newAppProject(), &corev1.Secret{}, &corev1.ConfigMap{}} {
		if _, err := c.GetInformer(sctx, obj, cache.BlockUntilSynced(false)); err != nil {
			return nil, fmt.Errorf("--namespace %s: watch %T: %w (is the operator's CRD installed?)", ns, obj, err)
		}
	}
	if _, err := c.GetInformer(sctx, &v1alpha1.ApplicationSet{}, cache.BlockUntilSynced(false)); meta.IsNoMatchError(err) {
		b.appSets = false
	} else if err != nil {
		return nil, fmt.Errorf("--namespace %s: watch ApplicationSets: %w", ns, err)
	}
	cctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	b.stop = stop
	go func() { _ = c.Start(cctx) }()
	if !c.WaitForCacheSync(sctx) {
		stop()
		return nil, fmt.Errorf("--namespace %s: the Applications were not listed within %s", ns, nsSyncTimeout)
	}
	b.loadProjects(sctx)
	b.loadArgoCDCM(sctx)
	if err := b.loadCredentials(sctx); err != nil {
		stop()
		return nil, err
	}
	return b, nil
}

// close ends the watches.
func (b *nsBackend) close() { b.stop() }

func newAppProject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(appProjectGVK)
	return u
}

// apps lists the namespace's Applications, each a copy.
func (b *nsBackend) apps(ctx context.Context) ([]*gitops.Application, error) {
	var list v1alpha1.ApplicationList
	if err := b.cache.List(ctx, &list, client.InNamespace(b.ns)); err != nil {
		return nil, fmt.Errorf("--namespace %s: list Applications: %w", b.ns, err)
	}
	out := make([]*gitops.Application, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, list.Items[i].DeepCopy())
	}
	return out, nil
}

// clusters are the kubeconfig's clusters with the namespace's cluster
// Secrets merged over them; a Secret that does not read is logged by
// name and left out, the others serve.
func (b *nsBackend) clusters(ctx context.Context) []gitops.ClusterConfig {
	var list corev1.SecretList
	if err := b.cache.List(ctx, &list, client.InNamespace(b.ns), client.MatchingLabels{engine.ClusterSecretTypeLabel: "cluster"}); err != nil {
		fmt.Fprintf(b.log, "portal: --namespace %s: cluster Secrets: %v\n", b.ns, err)
		return b.base
	}
	var out []gitops.ClusterConfig
	for i := range list.Items {
		c, err := gitops.ClusterFromSecret(&list.Items[i], b.inCluster)
		if err != nil {
			fmt.Fprintf(b.log, "portal: --namespace %s: %v; the Secret is left out\n", b.ns, err)
			continue
		}
		out = append(out, c)
	}
	return mergeClusters(b.base, out)
}

// loadProjects reads the AppProjects with the model's strict loader; a
// project that does not load is kept apart with why (the engine refuses
// its apps naming it).
func (b *nsBackend) loadProjects(ctx context.Context) *projectSet {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(appProjectGVK.GroupVersion().WithKind(v1alpha1.AppProjectKind + "List"))
	ps := &projectSet{refused: map[string]error{}}
	if err := b.cache.List(ctx, list, client.InNamespace(b.ns)); err != nil {
		fmt.Fprintf(b.log, "portal: --namespace %s: AppProjects: %v\n", b.ns, err)
		if old := b.projects.Load(); old != nil {
			return old
		}
		b.projects.Store(ps)
		return ps
	}
	objs := make([]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		objs[i] = &list.Items[i]
	}
	ps.loaded, ps.refused = decodeProjects(objs)
	b.projects.Store(ps)
	return ps
}

// loadArgoCDCM keeps argocd-cm's data (a missing ConfigMap is empty).
func (b *nsBackend) loadArgoCDCM(ctx context.Context) map[string]string {
	var cm corev1.ConfigMap
	data := map[string]string{}
	if err := b.cache.Get(ctx, client.ObjectKey{Namespace: b.ns, Name: argoCDConfigMapName}, &cm); err == nil {
		data = cm.Data
	}
	b.argocdCM.Store(&data)
	return data
}

// loadCredentials reads the repository Secrets and argocd-tls-certs-cm
// and argocd-ssh-known-hosts-cm into creds, as the operator does; a
// Secret that does not read is named in the log and left out.
func (b *nsBackend) loadCredentials(ctx context.Context) error {
	store, bad, err := repocreds.LoadNamespaceSkipping(ctx, b.kube, b.ns)
	if err != nil {
		return fmt.Errorf("--namespace %s: repository Secrets: %w", b.ns, err)
	}
	for name, e := range bad {
		fmt.Fprintf(b.log, "portal: --namespace %s: repository Secret %s: %v; left out\n", b.ns, name, e)
	}
	b.creds.Set(store)
	return nil
}

// attach wires the watches to the running portal: each change of an
// Application replaces it in the list (or adds or removes it) and tells
// the pages; a change of an AppProject gives the engine and the RBAC
// their new projects; of a Secret or Argo CD's ConfigMaps, the engine
// its clusters and credentials. It returns once the handlers are in.
func (b *nsBackend) attach(ctx context.Context, s *server, e *gitops.Engine, az *argoRBAC) error {
	b.srv, b.engine, b.authz = s, e, az
	s.ns = b
	handlers := map[client.Object]toolscache.ResourceEventHandler{
		&v1alpha1.Application{}: toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { b.appChanged(obj, false) },
			UpdateFunc: func(_, obj any) { b.appChanged(obj, false) },
			DeleteFunc: func(obj any) { b.appChanged(obj, true) },
		},
		newAppProject(): onAnyChange(func() {
			ps := b.loadProjects(ctx)
			e.Settings().SetProjects(ps.loaded, ps.refused)
			if az != nil {
				if err := az.setProjects(ps.loaded); err != nil {
					fmt.Fprintf(b.log, "portal: --namespace %s: project roles: %v; the last good ones stay\n", b.ns, err)
				}
			}
		}),
		&corev1.Secret{}: onAnyChange(func() { b.secretsChanged(ctx) }),
		&corev1.ConfigMap{}: onAnyChange(func() {
			b.loadArgoCDCM(ctx)
			if err := b.loadCredentials(ctx); err != nil {
				fmt.Fprintln(b.log, "portal:", err)
			}
		}),
	}
	for obj, h := range handlers {
		inf, err := b.cache.GetInformer(ctx, obj)
		if err != nil {
			return fmt.Errorf("--namespace %s: %w", b.ns, err)
		}
		if _, err := inf.AddEventHandler(h); err != nil {
			return fmt.Errorf("--namespace %s: %w", b.ns, err)
		}
	}
	if b.appSets {
		inf, err := b.cache.GetInformer(ctx, &v1alpha1.ApplicationSet{})
		if err != nil {
			return fmt.Errorf("--namespace %s: %w", b.ns, err)
		}
		if _, err := inf.AddEventHandler(onAnyChange(func() { s.opts.Hooks.list.publish(appSetTopic, streamEvent{Name: "appsets"}) })); err != nil {
			return err
		}
	}
	return nil
}

// onAnyChange calls f on every event of an informer.
func onAnyChange(f func()) toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{AddFunc: func(any) { f() }, UpdateFunc: func(_, _ any) { f() }, DeleteFunc: func(any) { f() }}
}

// secretsChanged reads the clusters and the credentials again.
func (b *nsBackend) secretsChanged(ctx context.Context) {
	clusters := b.clusters(ctx)
	if _, err := b.engine.Settings().SetClusters(ctx, clusters); err != nil {
		fmt.Fprintf(b.log, "portal: --namespace %s: clusters: %v\n", b.ns, err)
	}
	names := clusterNames(clusters)
	b.srv.clusterNames.Store(&names)
	if err := b.loadCredentials(ctx); err != nil {
		fmt.Fprintln(b.log, "portal:", err)
	}
}

// appChanged serves an Application as the API server has it now: a new
// one is added to the list (a "created" event), a changed one replaces
// the served copy (an "app" event when its sync or health changed), a
// deleted one leaves (a "removed" event); its pages are nudged and its
// waiters woken.
func (b *nsBackend) appChanged(obj any, deleted bool) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj, deleted = d.Obj, true
	}
	cur, ok := obj.(*v1alpha1.Application)
	if !ok || cur.Namespace != b.ns {
		return
	}
	s := b.srv
	if deleted {
		s.removeApp(cur.Name)
		ev := streamEvent{Name: "removed", Data: removedApp{Name: cur.Name, Project: projectOf(cur)}}
		s.opts.Hooks.list.publish(listTopic, ev)
		s.opts.Hooks.broker.publish(cur.Name, ev)
	} else {
		a := cur.DeepCopy()
		prev, existed := s.putApp(a)
		switch {
		case !existed:
			s.opts.Hooks.list.publish(listTopic, streamEvent{Name: "created", Data: a.Name})
		case prev.Status.Sync.Status != a.Status.Sync.Status || prev.Status.Health.Status != a.Status.Health.Status:
			s.opts.Hooks.list.publish(listTopic, streamEvent{Name: "app", Data: a.Name})
		}
		if s.nudges != nil {
			s.nudges.nudge(a.Name)
		}
	}
	b.mu.Lock()
	if ch, ok := b.changed[cur.Name]; ok {
		close(ch)
		delete(b.changed, cur.Name)
	}
	b.mu.Unlock()
}

// changes returns a channel closed at the next change of app name.
func (b *nsBackend) changes(name string) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	ch, ok := b.changed[name]
	if !ok {
		ch = make(chan struct{})
		b.changed[name] = ch
	}
	return ch
}
