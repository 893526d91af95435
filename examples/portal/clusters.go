package main

import (
	"context"
	"fmt"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/engine"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// loadClusterSecrets reads the Argo CD cluster Secrets of namespace ns
// (labelled argocd.argoproj.io/secret-type: cluster, as `argocd cluster
// add` writes them) as the engine's destinations (gitops.ClusterFromSecret):
// a Secret of the in-cluster address without credentials is reached with
// inCluster. A malformed Secret is an error naming it, never a value.
func loadClusterSecrets(ctx context.Context, kube kubernetes.Interface, ns string, inCluster *rest.Config) ([]gitops.ClusterConfig, error) {
	list, err := kube.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: engine.ClusterSecretTypeLabel + "=cluster"})
	if err != nil {
		return nil, fmt.Errorf("--cluster-secrets-namespace %s: %w", ns, err)
	}
	out := make([]gitops.ClusterConfig, 0, len(list.Items))
	for i := range list.Items {
		c, err := gitops.ClusterFromSecret(&list.Items[i], inCluster)
		if err != nil {
			return nil, fmt.Errorf("--cluster-secrets-namespace %s: %w", ns, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// mergeClusters adds the clusters of Secrets to base; a Secret naming the
// server of a base cluster replaces it (its name is the one shown and
// matched), as a cluster Secret of the in-cluster address renames Argo
// CD's "in-cluster".
func mergeClusters(base, secrets []gitops.ClusterConfig) []gitops.ClusterConfig {
	out := make([]gitops.ClusterConfig, 0, len(base)+len(secrets))
	for _, b := range base {
		replaced := false
		for _, s := range secrets {
			replaced = replaced || (s.Server != "" && s.Server == b.Server)
		}
		if !replaced {
			out = append(out, b)
		}
	}
	return append(out, secrets...)
}

// clusterNames maps each cluster's server URL to its name, for the pages:
// clusters are shown by name, as Argo CD shows them.
func clusterNames(clusters []gitops.ClusterConfig) map[string]string {
	out := map[string]string{}
	for _, c := range clusters {
		if c.Server != "" && c.Name != "" {
			if _, dup := out[c.Server]; !dup {
				out[c.Server] = c.Name
			}
		}
	}
	return out
}

// clusterOf is the name of a's destination cluster: destination.name, or
// the name of the cluster whose server destination.server is, else that
// URL.
func (s *server) clusterOf(a *gitops.Application) string {
	d := a.Spec.Destination
	if d.Name != "" {
		return d.Name
	}
	if n, ok := (*s.clusterNames.Load())[d.Server]; ok {
		return n
	}
	return d.Server
}
