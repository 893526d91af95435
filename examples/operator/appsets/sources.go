package appsets

import (
	"context"

	"github.com/kubegitops/gitops/appset"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// argoCDConfigMap is Argo CD's argocd-cm, where cluster.inClusterEnabled
// lives.
const argoCDConfigMap = "argocd-cm"

// secretClusters lists the Argo CD cluster Secrets of the controller's
// namespace at each generation, as Argo CD's clusters generator lists
// them: every declarative Secret, project-scoped ones included, with its
// labels and annotations. A Secret that cannot be read is named in a
// *appset.ClustersError returned with the others.
type secretClusters struct {
	reader    client.Reader
	namespace string
}

// Clusters implements appset.Clusters.
func (s secretClusters) Clusters(ctx context.Context) ([]appset.Cluster, error) {
	var list corev1.SecretList
	if err := s.reader.List(ctx, &list, client.InNamespace(s.namespace), client.MatchingLabels{appset.SecretTypeLabel: "cluster"}); err != nil {
		return nil, err
	}
	return appset.ClustersFromTypedSecrets(list.Items)
}

// inClusterEnabled reads argocd-cm's cluster.inClusterEnabled: anything
// but "false" (or no ConfigMap) keeps the local cluster.
func inClusterEnabled(reader client.Reader, namespace string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		cm := &corev1.ConfigMap{}
		err := reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: argoCDConfigMap}, cm)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		return cm.Data["cluster.inClusterEnabled"] != "false", nil
	}
}

// objects reads the ConfigMaps and Secrets of plugin generators and
// tokenRefs through the reconciler's reader (past the cache: they are
// read once per generation, and a Secret must not wait on an informer).
type objects struct{ r *Reconciler }

// ConfigMap implements appset.Objects.
func (o objects) ConfigMap(ctx context.Context, namespace, name string) (map[string]string, error) {
	cm := &corev1.ConfigMap{}
	if err := o.r.reader().Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, cm); err != nil {
		return nil, err
	}
	return cm.Data, nil
}

// Secret implements appset.Objects.
func (o objects) Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	if err := o.r.reader().Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, s); err != nil {
		return nil, err
	}
	return s, nil
}

// usesClusters reports whether a set's generators (nested ones included)
// read the cluster Secrets: clusters and clusterDecisionResource.
func usesClusters(gens []appset.Generator) bool {
	for _, g := range gens {
		switch {
		case g.Clusters != nil, g.ClusterDecisionResource != nil:
			return true
		case g.Matrix != nil && usesClusters(g.Matrix.Generators), g.Merge != nil && usesClusters(g.Merge.Generators):
			return true
		}
	}
	return false
}
