package main

import (
	"context"
	"fmt"
	"io"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/rbac"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// rbacConfigMapName is the ConfigMap Argo CD reads its RBAC from.
const rbacConfigMapName = "argocd-rbac-cm"

// reload replaces the policy with argocd-rbac-cm's data (nil: the
// ConfigMap is gone, leaving Argo CD's built-in roles only). A bad policy
// is refused and the last good one kept.
func (a *argoRBAC) reload(data map[string]string) error {
	cfg, err := rbac.Load(data)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	e, err := rbac.NewEnforcer(cfg, a.projects)
	if err != nil {
		return err
	}
	a.cfg = cfg
	a.enforcer.Store(e)
	return nil
}

// setProjects replaces the AppProjects whose roles are project policy
// (namespace mode: the AppProjects changed); a set that does not build
// keeps the last good one.
func (a *argoRBAC) setProjects(projects []gitops.Project) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, err := rbac.NewEnforcer(a.cfg, projects)
	if err != nil {
		return err
	}
	a.projects = projects
	a.enforcer.Store(e)
	return nil
}

// loadRBACNamespace reads argocd-rbac-cm from namespace ns of the cluster
// (--rbac-namespace) and builds the authorizer from it.
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
	return az, cfg, nil
}

// watchRBACConfigMap reloads a's policy each time argocd-rbac-cm of
// namespace ns changes, until ctx ends, as Argo CD's API server does: the
// next request is decided by the new policy, without a restart. A policy
// that does not load is reported to log and the last good one kept; a
// deleted ConfigMap leaves the built-in roles only.
func watchRBACConfigMap(ctx context.Context, kube kubernetes.Interface, ns string, a *argoRBAC, log io.Writer) {
	factory := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", rbacConfigMapName).String()
		}))
	apply := func(obj any) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok {
			return
		}
		if err := a.reload(cm.Data); err != nil {
			fmt.Fprintf(log, "portal: --rbac-namespace %s: ConfigMap %s: %v; the last good policy stays\n", ns, rbacConfigMapName, err)
		}
	}
	_, _ = factory.Core().V1().ConfigMaps().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    apply,
		UpdateFunc: func(_, obj any) { apply(obj) },
		DeleteFunc: func(any) {
			if err := a.reload(nil); err != nil {
				fmt.Fprintf(log, "portal: --rbac-namespace %s: %v\n", ns, err)
			}
		},
	})
	factory.Start(ctx.Done())
	<-ctx.Done()
	factory.Shutdown()
}
