package shard

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func clusterSecret(name, uid, server string, data map[string]string) corev1.Secret {
	s := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: name, UID: types.UID(uid),
		Labels: map[string]string{"argocd.argoproj.io/secret-type": "cluster"}}, Data: map[string][]byte{"name": []byte(name), "server": []byte(server)}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// Secrets are clusters of ID their UID with their shard field; the
// in-cluster destination without a Secret is ID ""; a Secret of its server
// replaces it, and neither counts with in-cluster disabled.
func TestClustersFromSecrets(t *testing.T) {
	secrets := []corev1.Secret{
		clusterSecret("a", "uid-a", "https://a.example", map[string]string{"shard": " 1 "}),
		clusterSecret("b", "uid-b", "https://b.example", map[string]string{"shard": "x"}),
		{ObjectMeta: metav1.ObjectMeta{Name: "not-a-cluster"}},
	}
	cs, servers := ClustersFromSecrets(secrets, true)
	if len(cs) != 3 || cs[0].ID != "uid-a" || cs[0].Shard == nil || *cs[0].Shard != 1 || cs[1].Shard != nil || cs[2].ID != "" || cs[2].Server != inClusterServer {
		t.Fatalf("clusters: %+v", cs)
	}
	if servers["a"] != "https://a.example" || servers["in-cluster"] != inClusterServer {
		t.Errorf("servers: %v", servers)
	}
	own := clusterSecret("in-cluster", "uid-in", inClusterServer, nil)
	cs, _ = ClustersFromSecrets([]corev1.Secret{own}, true)
	if len(cs) != 1 || cs[0].ID != "uid-in" {
		t.Errorf("in-cluster Secret: %+v", cs)
	}
	if cs, _ := ClustersFromSecrets([]corev1.Secret{own}, false); len(cs) != 0 {
		t.Errorf("in-cluster disabled: %+v", cs)
	}
}
