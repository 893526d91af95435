package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/examples/operator/controller"
	"github.com/kubegitops/gitops/shard"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// controllerName is Argo CD's StatefulSet Pod name of replica n.
func controllerName(n int) string { return fmt.Sprintf("argocd-application-controller-%d", n) }

// placementSetup is what both placement tests start from: namespace ns
// with a cluster Secret of cluster <prefix>-second (the test cluster under another name)
// and 4 apps, app 0 and 1 on in-cluster, app 2 and 3 on second, each
// named <prefix><i>.
type placementSetup struct {
	ns, prefix string
	second     string // the second cluster's name
	c          client.WithWatch
	secret     *corev1.Secret
	replicas   [2]*runningOperator
	metrics    [2]string
}

func startPlacement(t *testing.T, prefix string, params map[string]string) *placementSetup {
	t.Helper()
	ctx := t.Context()
	s := &placementSetup{ns: cluster.TestNamespace(t), prefix: prefix, c: testClient(t)}
	dest := cluster.TestNamespace(t)
	if params != nil {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "argocd-cmd-params-cm"}, Data: params}
		if err := s.c.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	// The cluster's name is the test's, as its apps' names are.
	s.second = prefix + "-second"
	s.secret = clusterSecret(s.ns, "second-cluster", s.second, cluster.Config())
	if err := s.c.Create(ctx, s.secret); err != nil {
		t.Fatal(err)
	}
	repo := shardRepo(t, 4)
	t.Setenv(EnvReplicas, "2")
	for n := range 2 {
		s.metrics[n] = freeAddr(t)
		args := []string{"-id", controllerName(n), "-metrics-bind-address", s.metrics[n]}
		if n > 0 {
			args = append(args, "-install-crd=false")
		}
		s.replicas[n] = startReplica(t, s.ns, args...)
		if n == 0 {
			for i := range 4 {
				app := shardApp(s.ns, dest, repo, prefix, i)
				if i >= 2 {
					app.Spec.Destination.Name = s.second
				}
				createApps(ctx, t, s.c, app)
			}
		}
	}
	return s
}

// waitOwners waits until every app is Synced and Healthy, those of
// in-cluster owned by replica inCluster and those of second by second.
// After a move the new owner builds its own cache of the moved cluster
// while the replica that lost it still holds one, in this one process:
// each operator's metrics live in a registry of its own run.
func (s *placementSetup) waitOwners(t *testing.T, inCluster, second int) {
	t.Helper()
	waitApps(t.Context(), t, s.c, s.ns, 4, fmt.Sprintf("Synced, Healthy and owned: in-cluster's on replica %d, second's on %d", inCluster, second), func(a *v1alpha1.Application) bool {
		want := controllerName(inCluster)
		if a.Spec.Destination.Name == s.second {
			want = controllerName(second)
		}
		return healthyApp(a) && a.Annotations[controller.AnnotationOwner] == want
	})
}

// pin writes the cluster Secret's shard field.
func (s *placementSetup) pin(t *testing.T, n int) {
	t.Helper()
	patch := fmt.Appendf(nil, `{"stringData":{"shard":"%d"}}`, n)
	if err := s.c.Patch(t.Context(), s.secret, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

// steady refreshes every app and checks that no app changed owner: each
// is reconciled by its replica only.
func (s *placementSetup) steady(t *testing.T) {
	t.Helper()
	rec := recordApps(t.Context(), t, s.c, s.ns)
	refreshAll(t.Context(), t, s.c, s.ns, 4)
	owners, _ := rec.seen()
	for app, seq := range owners {
		if len(seq) != 1 {
			t.Errorf("app %s changed owner in steady state: %v", app, seq)
		}
	}
}

// Two operators as Argo CD's StatefulSet runs them ($ARGOCD_CONTROLLER_REPLICAS
// 2, Pod names ending in 0 and 1) with argocd-cmd-params-cm
// controller.sharding.algorithm round-robin: in-cluster (no Secret, first
// by ID) is replica 0's, the cluster Secret second is replica 1's, and
// every app is synced by the replica of its cluster only. A shard field
// "0" on the Secret moves second's apps to replica 0, which takes them;
// replica 1 says it lost them. The metrics endpoint of each replica
// reports its apps.
func TestPlacementByClusterRoundRobin(t *testing.T) {
	s := startPlacement(t, "rr", map[string]string{"controller.sharding.algorithm": "round-robin"})
	s.waitOwners(t, 0, 1)
	s.steady(t)
	for n, want := range []string{
		`gitops_shard_apps{algorithm="round-robin",member="argocd-application-controller-0",replica="0"} 2`,
		`gitops_shard_apps{algorithm="round-robin",member="argocd-application-controller-1",replica="1"} 2`,
	} {
		waitMetric(t, s.metrics[n], want)
	}
	waitMetric(t, s.metrics[1], `gitops_shard_clusters{cluster="rr-second",replica="1"} 1`)

	s.pin(t, 0)
	s.waitOwners(t, 0, 0)
	if log := s.replicas[1].log.String(); !strings.Contains(log, "apps lost by sharding") || !strings.Contains(log, s.ns+"/rr2") {
		t.Errorf("replica 1 did not name the apps it lost:\n%s", log)
	}
	waitMetric(t, s.metrics[0], `gitops_shard_apps{algorithm="round-robin",member="argocd-application-controller-0",replica="0"} 4`)
	waitMetric(t, s.metrics[1], `gitops_shard_apps_lost_total{member="argocd-application-controller-1"} 2`)
	s.steady(t)
}

// With $ARGOCD_CONTROLLER_REPLICAS 2 and no algorithm, placement is Argo
// CD's legacy one: the cluster Secret's replica is FNV-32a of its UID mod
// 2, in-cluster's is 0. A shard field naming the other replica moves the
// cluster's apps there.
func TestPlacementByClusterLegacy(t *testing.T) {
	s := startPlacement(t, "legacy", nil)
	if err := s.c.Get(t.Context(), client.ObjectKeyFromObject(s.secret), s.secret); err != nil {
		t.Fatal(err)
	}
	want := shard.LegacyShard(string(s.secret.UID), 2)
	s.waitOwners(t, 0, want)
	s.steady(t)
	s.pin(t, 1-want)
	s.waitOwners(t, 0, 1-want)
	s.steady(t)
}

// waitMetric waits until the metrics endpoint at addr has the line want.
func waitMetric(t *testing.T, addr, want string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return slices.Contains(strings.Split(scrape(t, addr), "\n"), want), nil
	})
	if err != nil {
		t.Errorf("metrics at %s never had %s:\n%s", addr, want, grepLines(scrape(t, addr), "gitops_shard_"))
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
