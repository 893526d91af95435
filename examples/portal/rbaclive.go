package main

import (
	"context"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/rbac"
)

// The objects of Argo CD's namespace the portal reads with
// --rbac-namespace, as Argo CD's API server reads them.
const (
	// rbacConfigMapName is the ConfigMap Argo CD reads its RBAC from.
	rbacConfigMapName = "argocd-rbac-cm"
	// argoCDConfigMapName is argocd-cm: the portal reads its
	// server.rbac.disableApplicationFineGrainedRBACInheritance only.
	argoCDConfigMapName = "argocd-cm"
	// argoCDSecretName is argocd-secret: the portal reads its
	// server.secretkey only, the key of project tokens.
	argoCDSecretName = "argocd-secret"
	// serverSecretKey is argocd-secret's key of the token signing key.
	serverSecretKey = "server.secretkey"
)

// loadRBACNamespace reads argocd-rbac-cm from namespace ns of the cluster
// (--rbac-namespace) and builds the authorizer from it, with argocd-cm's
// fine-grained inheritance and argocd-secret's server.secretkey when they
// are there (without argocd-cm, Argo CD 3's default; without the key,
// project tokens are refused).
func loadRBACNamespace(ctx context.Context, kube kubernetes.Interface, ns string, projects []gitops.Project) (*argoRBAC, *rbac.Config, error) {
	cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, rbacConfigMapName, metav1.GetOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("--rbac-namespace %s: ConfigMap %s: %w", ns, rbacConfigMapName, err)
	}
	cfg, err := rbac.Load(cm.Data)
	if err != nil {
		return nil, nil, fmt.Errorf("--rbac-namespace %s: ConfigMap %s: %w", ns, rbacConfigMapName, err)
	}
	az, err := newArgoRBAC(cfg, projects)
	if err != nil {
		return nil, nil, fmt.Errorf("--rbac-namespace %s: ConfigMap %s: %w", ns, rbacConfigMapName, err)
	}
	argocdCM, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, argoCDConfigMapName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, nil, fmt.Errorf("--rbac-namespace %s: ConfigMap %s: %w", ns, argoCDConfigMapName, err)
	default:
		if err := applyArgoCDCM(az, argocdCM.Data); err != nil {
			return nil, nil, fmt.Errorf("--rbac-namespace %s: ConfigMap %s: %w", ns, argoCDConfigMapName, err)
		}
	}
	secret, err := kube.CoreV1().Secrets(ns).Get(ctx, argoCDSecretName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, nil, fmt.Errorf("--rbac-namespace %s: Secret %s: %w", ns, argoCDSecretName, err)
	default:
		az.setSecretKey(secret.Data[serverSecretKey])
	}
	return az, cfg, nil
}

// applyArgoCDCM applies argocd-cm's fine-grained inheritance (nil data:
// Argo CD 3's default).
func applyArgoCDCM(a *argoRBAC, data map[string]string) error {
	inherit, err := rbac.InheritanceFromArgoCDCM(data)
	if err != nil {
		return err
	}
	return a.setInheritance(inherit)
}

// watchRBACNamespace keeps a equal to Argo CD's namespace ns until ctx
// ends, as Argo CD's API server does: each change of argocd-rbac-cm,
// argocd-cm's fine-grained inheritance or argocd-secret's server.secretkey
// decides the next request, without a restart. A policy or value that does
// not load is reported to log and the last good one kept; a deleted
// argocd-rbac-cm leaves the built-in roles only, a deleted argocd-cm Argo
// CD 3's default, a deleted argocd-secret no key (project tokens refused).
// Nothing of a Secret is logged.
func watchRBACNamespace(ctx context.Context, kube kubernetes.Interface, ns string, a *argoRBAC, log io.Writer) {
	report := func(what string, err error) {
		if err != nil {
			fmt.Fprintf(log, "portal: --rbac-namespace %s: %s: %v; the last good one stays\n", ns, what, err)
		}
	}
	rbacCM := informerOf[*corev1.ConfigMap](kube, ns, rbacConfigMapName, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
		return f.Core().V1().ConfigMaps().Informer()
	})
	watchNamed(rbacCM, func(cm *corev1.ConfigMap) { report("ConfigMap "+rbacConfigMapName, a.reload(cm.Data)) },
		func() { report("ConfigMap "+rbacConfigMapName, a.reload(nil)) })
	argocdCM := informerOf[*corev1.ConfigMap](kube, ns, argoCDConfigMapName, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
		return f.Core().V1().ConfigMaps().Informer()
	})
	watchNamed(argocdCM, func(cm *corev1.ConfigMap) { report("ConfigMap "+argoCDConfigMapName, applyArgoCDCM(a, cm.Data)) },
		func() { report("ConfigMap "+argoCDConfigMapName, applyArgoCDCM(a, nil)) })
	secret := informerOf[*corev1.Secret](kube, ns, argoCDSecretName, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
		return f.Core().V1().Secrets().Informer()
	})
	watchNamed(secret, func(s *corev1.Secret) { a.setSecretKey(s.Data[serverSecretKey]) }, func() { a.setSecretKey(nil) })
	for _, f := range []informers.SharedInformerFactory{rbacCM.factory, argocdCM.factory, secret.factory} {
		f.Start(ctx.Done())
	}
	<-ctx.Done()
	for _, f := range []informers.SharedInformerFactory{rbacCM.factory, argocdCM.factory, secret.factory} {
		f.Shutdown()
	}
}

// namedInformer watches one object, by name, of a namespace.
type namedInformer[T any] struct {
	factory  informers.SharedInformerFactory
	informer cache.SharedIndexInformer
}

// informerOf makes the informer of the object name of namespace ns (a
// field selector on its name: nothing else of the namespace is read).
func informerOf[T any](kube kubernetes.Interface, ns, name string, pick func(informers.SharedInformerFactory) cache.SharedIndexInformer) namedInformer[T] {
	f := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		}))
	return namedInformer[T]{factory: f, informer: pick(f)}
}

// watchNamed calls apply with the object on each add and update, and gone
// when it is deleted.
func watchNamed[T any](n namedInformer[T], apply func(T), gone func()) {
	_, _ = n.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if o, ok := obj.(T); ok {
				apply(o)
			}
		},
		UpdateFunc: func(_, obj any) {
			if o, ok := obj.(T); ok {
				apply(o)
			}
		},
		DeleteFunc: func(any) { gone() },
	})
}
