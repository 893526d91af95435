package engine

import (
	"github.com/kubegitops/gitops/internal/clustersecret"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
)

// ClusterSecretError reports a malformed Argo CD cluster Secret: it names
// the Secret (namespace/name) and the key at fault ("server",
// "config.tlsClientConfig.caData"), never a value.
type ClusterSecretError = clustersecret.Error

// ErrClusterConfigUnsupported is wrapped by the ClusterSecretError of a
// config field the engine does not implement (awsAuthConfig) or that Argo
// CD does not define (an auth provider such as gcp or azure: use
// execProviderConfig with the provider's credential plugin).
var ErrClusterConfigUnsupported = clustersecret.ErrUnsupported

// ClusterSecretTypeLabel is the label of Argo CD's typed Secrets; cluster
// Secrets carry the value "cluster" (IsClusterSecret).
const ClusterSecretTypeLabel = clustersecret.TypeLabel

// IsClusterSecret reports whether s is labelled an Argo CD cluster Secret
// (argocd.argoproj.io/secret-type: cluster).
func IsClusterSecret(s *corev1.Secret) bool { return clustersecret.IsClusterSecret(s.Labels) }

// ClusterFromSecret reads an Argo CD cluster Secret, as `argocd cluster
// add` writes it, into a destination: name (the server URL when empty),
// server, namespaces (comma-separated), clusterResources ("true" or
// "false"), project, and the connection of its config key (bearerToken,
// username and password, tlsClientConfig, execProviderConfig,
// disableCompression, proxyUrl). A Secret of the in-cluster address
// (https://kubernetes.default.svc) whose config names no credentials is
// the cluster the host runs in, reached with inCluster, as Argo CD uses its
// own identity; such a Secret with a nil inCluster is an offline
// destination. A malformed Secret is a *ClusterSecretError.
func ClusterFromSecret(s *corev1.Secret, inCluster *rest.Config) (ClusterConfig, error) {
	c, err := clustersecret.FromSecret(s)
	if err != nil {
		return ClusterConfig{}, err
	}
	cfg := c.Config
	if c.InCluster && inCluster != nil {
		cfg = rest.CopyConfig(inCluster)
	}
	return ClusterConfig{
		Name: c.Name, Server: c.Server, Config: cfg,
		Namespaces: c.Namespaces, ClusterResources: c.ClusterResources, Project: c.Project,
	}, nil
}
