package shard

import (
	"strconv"
	"strings"

	"github.com/kubegitops/gitops/internal/clustersecret"
	corev1 "k8s.io/api/core/v1"
)

// inClusterServer and inClusterName are Argo CD's in-cluster destination.
const (
	inClusterServer = "https://kubernetes.default.svc"
	inClusterName   = "in-cluster"
)

// ClustersFromSecrets returns the destinations as Argo CD's placement sees
// them, and the server of each cluster name. The rules:
//   - every Argo CD cluster Secret that can be read is a cluster of ID its
//     UID, Shard its shard field when that is an integer (Argo CD ignores
//     another value too); unreadable Secrets are left out (the host
//     reports them);
//   - a Secret of the in-cluster server counts only when inCluster
//     (argocd-cm cluster.inClusterEnabled);
//   - without such a Secret and with inCluster, the in-cluster
//     destination is a cluster of ID "" named in-cluster.
func ClustersFromSecrets(secrets []corev1.Secret, inCluster bool) (clusters []Cluster, servers map[string]string) {
	servers = map[string]string{}
	hasInCluster := false
	for i := range secrets {
		s := &secrets[i]
		if !clustersecret.IsClusterSecret(s.Labels) {
			continue
		}
		c, err := clustersecret.FromSecret(s)
		if err != nil || (c.Server == inClusterServer && !inCluster) {
			continue
		}
		hasInCluster = hasInCluster || c.Server == inClusterServer
		sc := Cluster{ID: string(s.UID), Server: c.Server}
		v, ok := s.Data["shard"]
		if sv, sok := s.StringData["shard"]; sok {
			v, ok = []byte(sv), true
		}
		if ok {
			if n, err := strconv.Atoi(strings.TrimSpace(string(v))); err == nil {
				sc.Shard = &n
			}
		}
		clusters = append(clusters, sc)
		servers[c.Name] = c.Server
	}
	if !hasInCluster && inCluster {
		clusters = append(clusters, Cluster{Server: inClusterServer})
		if _, taken := servers[inClusterName]; !taken {
			servers[inClusterName] = inClusterServer
		}
	}
	return clusters, servers
}
