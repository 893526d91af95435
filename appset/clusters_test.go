package appset

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// clusterList is a Clusters lister over Secrets a test changes.
type clusterList struct{ secrets []corev1.Secret }

func (l *clusterList) Clusters(context.Context) ([]Cluster, error) {
	return ClustersFromTypedSecrets(l.secrets)
}

func clusterSecret(name, cluster, server, project string) corev1.Secret {
	return corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: name, Labels: map[string]string{SecretTypeLabel: "cluster"}},
		Data: map[string][]byte{"name": []byte(cluster), "server": []byte(server), "project": []byte(project)}}
}

const clustersSet = header + `  generators:
  - clusters: {}
  template:
    metadata: {name: '{{nameNormalized}}-gb', labels: {project: 'p-{{project}}'}}
    spec: {destination: {server: '{{server}}', namespace: gb}}
`

// TestClustersGeneratorSeesEveryCluster: a declarative cluster Secret
// added after the first generation is generated for at the next one;
// a project-scoped cluster is generated with its project; the local
// cluster is there unless cluster.inClusterEnabled says "false".
func TestClustersGeneratorSeesEveryCluster(t *testing.T) {
	l := &clusterList{secrets: []corev1.Secret{clusterSecret("c1", "dev", "https://dev:6443", "")}}
	opts := DefaultOptions()
	opts.Clusters = l
	enabled := true
	opts.InClusterEnabled = func(context.Context) (bool, error) { return enabled, nil }
	r := NewRunner(opts)
	set := loadOne(t, clustersSet)
	res, err := r.Generate(context.Background(), set)
	if err != nil || strings.Join(names(res.Applications), ",") != "dev-gb,in-cluster-gb" {
		t.Fatalf("first: %v, %v", err, names(res.Applications))
	}
	l.secrets = append(l.secrets, clusterSecret("c2", "team-a", "https://team-a:6443", "team-a"))
	if res, err = r.Generate(context.Background(), set); err != nil || strings.Join(names(res.Applications), ",") != "dev-gb,in-cluster-gb,team-a-gb" {
		t.Fatalf("after a Secret was added: %v, %v", err, names(res.Applications))
	}
	if p := res.Applications[2].GetLabels()["project"]; p != "p-team-a" {
		t.Errorf("project-scoped cluster: project label %q", p)
	}
	enabled = false
	if res, err = r.Generate(context.Background(), set); err != nil || strings.Join(names(res.Applications), ",") != "dev-gb,team-a-gb" {
		t.Fatalf("in-cluster disabled: %v, %v", err, names(res.Applications))
	}
}

// TestClustersGeneratorUnreadableSecret: a cluster Secret that cannot be
// read fails the generator, naming the Secret, while the others are
// generated (a new one included) and the unreadable cluster's last
// Application is kept.
func TestClustersGeneratorUnreadableSecret(t *testing.T) {
	l := &clusterList{secrets: []corev1.Secret{clusterSecret("c1", "dev", "https://dev:6443", ""), clusterSecret("c2", "prod", "https://prod:6443", "")}}
	opts := DefaultOptions()
	opts.Clusters = l
	r := NewRunner(opts)
	set := loadOne(t, clustersSet)
	if _, err := r.Generate(context.Background(), set); err != nil {
		t.Fatal(err)
	}
	broken := clusterSecret("c2", "prod", "", "") // no server
	l.secrets = []corev1.Secret{l.secrets[0], broken, clusterSecret("c3", "qa", "https://qa:6443", "")}
	res, err := r.Generate(context.Background(), set)
	var ce *ClustersError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "argocd/c2") {
		t.Fatalf("err = %v, want a ClustersError naming argocd/c2", err)
	}
	if got := strings.Join(names(res.Applications), ","); got != "dev-gb,in-cluster-gb,prod-gb,qa-gb" {
		t.Fatalf("apps = %s, want the readable clusters, qa included, and prod kept", got)
	}
	if !res.Generators[0].Stale || res.Generators[0].Err == nil {
		t.Fatalf("generator result = %+v", res.Generators[0])
	}
}
