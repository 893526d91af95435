package main

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/examples/operator/controller"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// clusterSecrets keeps the engine's destinations equal to the Argo CD
// cluster Secrets of the operator's namespace, plus the in-cluster
// destination (https://kubernetes.default.svc, named in-cluster) unless a
// Secret names that server, as Argo CD does.
type clusterSecrets struct {
	client    client.Client
	engine    *gitops.Engine
	events    *controller.ClusterEvents
	recorder  record.EventRecorder
	namespace string
	inCluster *rest.Config
	// inClusterEnabled reports argocd-cm cluster.inClusterEnabled: when
	// false, the cluster the operator runs in is no destination, neither
	// built in nor by a Secret naming its server.
	inClusterEnabled func() bool
	log              logr.Logger
}

// setupClusterSecrets watches the cluster Secrets of f.namespace.
func setupClusterSecrets(mgr manager.Manager, e *gitops.Engine, events *controller.ClusterEvents, cfg *rest.Config, f flags, inClusterEnabled func() bool, log logr.Logger) (*clusterSecrets, error) {
	r := &clusterSecrets{
		client: mgr.GetClient(), engine: e, events: events, namespace: f.namespace, inCluster: cfg,
		recorder: mgr.GetEventRecorderFor("gitops-operator"), inClusterEnabled: inClusterEnabled, log: log.WithName("clusters"),
	}
	isCluster := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == f.namespace && o.GetLabels()[engine.ClusterSecretTypeLabel] == "cluster"
	})
	return r, ctrl.NewControllerManagedBy(mgr).Named("clustersecrets").
		WithOptions(crcontroller.Options{NeedLeaderElection: f.everyReplica()}).
		For(&corev1.Secret{}, builder.WithPredicates(isCluster)).
		Complete(r)
}

// Reconcile reads every cluster Secret again and hands the engine the
// whole list: a Secret that cannot be read is reported (a Warning Event on
// it and the log, naming the key) and left out, and the others are served.
func (r *clusterSecrets) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	var list corev1.SecretList
	if err := r.client.List(ctx, &list, client.InNamespace(r.namespace), client.MatchingLabels{engine.ClusterSecretTypeLabel: "cluster"}); err != nil {
		return ctrl.Result{}, err
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	var clusters []gitops.ClusterConfig
	taken := map[string]string{} // name or server -> Secret
	hasInCluster := false
	for i := range list.Items {
		s := &list.Items[i]
		c, err := gitops.ClusterFromSecret(s, r.inCluster)
		if err == nil {
			for _, k := range []string{c.Name, c.Server} {
				if other, dup := taken[k]; dup && err == nil {
					err = &engine.ClusterSecretError{Secret: s.Namespace + "/" + s.Name, Key: "name", Err: errDuplicate(k, other)}
				}
			}
		}
		if err != nil {
			r.log.Error(err, "cluster secret left out", "secret", s.Name)
			r.recorder.Event(s, corev1.EventTypeWarning, "InvalidClusterSecret", err.Error())
			continue
		}
		if c.Server == v1alpha1.KubernetesInternalAPIServerAddr && !r.inClusterEnabled() {
			r.log.Info("cluster secret left out: argocd-cm cluster.inClusterEnabled is false", "secret", s.Name)
			continue
		}
		taken[c.Name], taken[c.Server] = s.Name, s.Name
		hasInCluster = hasInCluster || c.Server == v1alpha1.KubernetesInternalAPIServerAddr
		clusters = append(clusters, c)
	}
	if !hasInCluster && taken["in-cluster"] == "" && r.inClusterEnabled() {
		clusters = append([]gitops.ClusterConfig{{Name: v1alpha1.KubernetesInClusterName, Server: v1alpha1.KubernetesInternalAPIServerAddr, Config: r.inCluster}}, clusters...)
	}
	changed, err := r.engine.Settings().SetClusters(ctx, clusters)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(changed) > 0 {
		r.log.Info("clusters changed", "clusters", changed)
		return ctrl.Result{}, r.requeueApps(ctx, changed)
	}
	return ctrl.Result{}, nil
}

// requeueApps reconciles at once the Applications whose destination is
// one of the changed clusters.
func (r *clusterSecrets) requeueApps(ctx context.Context, changed []string) error {
	var apps v1alpha1.ApplicationList
	if err := r.client.List(ctx, &apps); err != nil {
		return err
	}
	for _, a := range apps.Items {
		d := a.Spec.Destination
		if (d.Server != "" && slices.Contains(changed, d.Server)) || (d.Name != "" && slices.Contains(changed, d.Name)) {
			r.events.Requeue(types.NamespacedName{Namespace: a.Namespace, Name: a.Name})
		}
	}
	return nil
}

// errDuplicate says that another Secret already names a destination k, as
// Argo CD refuses two clusters of one server.
func errDuplicate(k, other string) error {
	return fmt.Errorf("destination %s is already the cluster of Secret %s", k, other)
}
