package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/examples/operator/controller"
	"github.com/kubegitops/gitops/shard"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// dynamicSetup is a namespace run with Argo CD's dynamic cluster
// distribution: argocd-cmd-params-cm with round-robin, the controller
// Deployment argocd-application-controller, cluster Secrets of the test
// cluster under the names <prefix>-<cluster> (and another address each),
// and one app per cluster
// (in-cluster first), named <prefix><i>.
type dynamicSetup struct {
	ns, prefix string
	clusters   []string // the destinations' names, in-cluster first
	c          client.WithWatch
	repo       string
}

func startDynamic(t *testing.T, prefix string, replicas int32, clusters ...string) *dynamicSetup {
	t.Helper()
	ctx := t.Context()
	t.Setenv(EnvDynamicDistribution, "true")
	s := &dynamicSetup{ns: cluster.TestNamespace(t), prefix: prefix, c: testClient(t), clusters: []string{"in-cluster"}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "argocd-cmd-params-cm"},
		Data: map[string]string{"controller.sharding.algorithm": "round-robin"}}
	if err := s.c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app.kubernetes.io/name": DefaultControllerName}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: DefaultControllerName}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "operator", Image: "gitops-operator:test"}}}},
	}}
	if err := s.c.Create(ctx, dep); err != nil {
		t.Fatal(err)
	}
	if len(clusters) > 2 {
		t.Fatal("the test cluster has two addresses: at most two cluster Secrets")
	}
	for i, name := range clusters {
		name = prefix + "-" + name
		// Each Secret names another server: the test cluster's address,
		// then the same under its other name (its certificate has both).
		cfg := rest.CopyConfig(cluster.Config())
		if i == 1 {
			cfg.Host = strings.Replace(cfg.Host, "127.0.0.1", "localhost", 1)
		}
		if err := s.c.Create(ctx, clusterSecret(s.ns, name, name, cfg)); err != nil {
			t.Fatal(err)
		}
		s.clusters = append(s.clusters, name)
	}
	s.repo = shardRepo(t, len(s.clusters))
	return s
}

// start runs an operator named name with its metrics on the returned
// address; extra are more flags.
func (s *dynamicSetup) start(t *testing.T, name string, extra ...string) (*runningOperator, string) {
	t.Helper()
	addr := freeAddr(t)
	args := append([]string{"-id", name, "-metrics-bind-address", addr}, extra...)
	if name != s.prefix+"-a" {
		args = append(args, "-install-crd=false")
	}
	return startReplica(t, s.ns, args...), addr
}

// createApps creates app i on cluster i.
func (s *dynamicSetup) createApps(t *testing.T) {
	t.Helper()
	dest := cluster.TestNamespace(t)
	for i, name := range s.clusters {
		app := shardApp(s.ns, dest, s.repo, s.prefix, i)
		app.Spec.Destination.Name = name
		createApps(t.Context(), t, s.c, app)
	}
}

// claims reads argocd-app-controller-shard-cm: the raw mapping and the
// controller name of each number.
func (s *dynamicSetup) claims(ctx context.Context) (string, []string, error) {
	var cm corev1.ConfigMap
	if err := s.c.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: shard.ShardConfigMapName}, &cm); err != nil {
		return "", nil, err
	}
	raw := cm.Data[shard.ShardMappingKey]
	var list []shard.ShardClaim
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		return raw, nil, err
	}
	names := make([]string, len(list))
	for i, c := range list {
		if c.ShardNumber != i {
			return raw, nil, fmt.Errorf("entry %d is shard %d", i, c.ShardNumber)
		}
		names[i] = c.ControllerName
	}
	return raw, names, nil
}

// waitClaims waits until the ConfigMap names want, number by number.
func (s *dynamicSetup) waitClaims(t *testing.T, want ...string) string {
	t.Helper()
	var raw string
	var got []string
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		raw, got, _ = s.claims(ctx)
		return strings.Join(got, ",") == strings.Join(want, ","), nil
	})
	if err != nil {
		t.Fatalf("%s never named %q: %q (%s)", shard.ShardConfigMapName, want, got, raw)
	}
	return raw
}

// placed returns the replica number of each cluster by name under
// round-robin over replicas, computed from the cluster Secrets as Argo CD
// places them.
func (s *dynamicSetup) placed(t *testing.T, replicas int) map[string]int {
	t.Helper()
	var secrets corev1.SecretList
	if err := s.c.List(t.Context(), &secrets, client.InNamespace(s.ns)); err != nil {
		t.Fatal(err)
	}
	clusters, servers := shard.ClustersFromSecrets(secrets.Items, true)
	byServer := shard.ClusterShards(shard.AlgorithmRoundRobin, clusters, nil, replicas)
	out := map[string]int{}
	for _, name := range s.clusters {
		n, ok := byServer[servers[name]]
		if !ok {
			t.Fatalf("cluster %s is not placed: %v %v", name, servers, byServer)
		}
		out[name] = n
	}
	return out
}

// waitOwners waits until every app is Synced and Healthy and owned by
// the replica holding its cluster's number, owners[number]; an app
// whose number is "" is owned by none (and not synced).
func (s *dynamicSetup) waitOwners(t *testing.T, owners ...string) {
	t.Helper()
	placed := s.placed(t, len(owners))
	want := map[string]string{}
	for i, name := range s.clusters {
		want[fmt.Sprintf("%s%d", s.prefix, i)] = owners[placed[name]]
	}
	waitApps(t.Context(), t, s.c, s.ns, len(s.clusters), fmt.Sprintf("Synced, Healthy and owned as %v", want), func(a *v1alpha1.Application) bool {
		w := want[a.Name]
		return (w == "" || healthyApp(a)) && a.Annotations[controller.AnnotationOwner] == w
	})
}

// scale sets the controller Deployment's spec.replicas.
func (s *dynamicSetup) scale(t *testing.T, n int) {
	t.Helper()
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: DefaultControllerName}}
	if err := s.c.Patch(t.Context(), dep, client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, n))); err != nil {
		t.Fatal(err)
	}
}

// Two operators with $ARGOCD_ENABLE_DYNAMIC_CLUSTER_DISTRIBUTION and the
// controller Deployment at 2 replicas claim numbers 0 and 1 in
// argocd-app-controller-shard-cm (the first started takes 0) and split
// the three clusters by round-robin, renewing their heartbeats. Scaled to
// 3, the two add an entry at once and a third operator takes it: the
// clusters are placed again over 3. When that third one stops, a fourth
// (its Pod's replacement) holds no number while the third's claim is
// fresh, then takes it over once it is 3 heartbeats old, and syncs the
// cluster it moves to. Scaled down to 2, the claims are reset, two
// replicas claim again and the clusters follow them. Every operator runs
// in this process: each has its metrics registry, and each /metrics
// endpoint serves controller-runtime's series beside the engine's and the
// shard's.
func TestDynamicDistribution(t *testing.T) {
	s := startDynamic(t, "dyn", 2, "second", "third")
	a, aMetrics := s.start(t, "dyn-a")
	s.waitClaims(t, "dyn-a", "")
	_, bMetrics := s.start(t, "dyn-b")
	raw := s.waitClaims(t, "dyn-a", "dyn-b")
	for _, key := range []string{`"ShardNumber":1`, `"ControllerName":"dyn-b"`, `"HeartbeatTime":"`} {
		if !strings.Contains(raw, key) {
			t.Errorf("%s is not Argo CD's shape, no %s: %s", shard.ShardMappingKey, key, raw)
		}
	}
	s.createApps(t)
	s.waitOwners(t, "dyn-a", "dyn-b")
	waitMetric(t, aMetrics, `gitops_shard_apps{algorithm="round-robin",member="dyn-a",replica="0"} 2`)
	waitMetric(t, bMetrics, `gitops_shard_apps{algorithm="round-robin",member="dyn-b",replica="1"} 1`)
	for _, series := range []string{"controller_runtime_reconcile_total{", "gitops_shard_members{", "gitops_refresh_total{"} {
		for _, addr := range []string{aMetrics, bMetrics} {
			if !strings.Contains(scrape(t, addr), series) {
				t.Errorf("metrics at %s have no %s", addr, series)
			}
		}
	}

	// The heartbeat renews the claim.
	first := s.heartbeat(t, 0)
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return s.heartbeat(t, 0).After(first.Time), nil
	})
	if err != nil {
		t.Errorf("dyn-a never renewed its heartbeat (last %v)", first)
	}

	s.scale(t, 3)
	s.waitClaims(t, "dyn-a", "dyn-b", "")
	c, _ := s.start(t, "dyn-c")
	s.waitClaims(t, "dyn-a", "dyn-b", "dyn-c")
	s.waitOwners(t, "dyn-a", "dyn-b", "dyn-c")
	if log := a.log.String(); !strings.Contains(log, "replica count changed") || !strings.Contains(log, "clusters placed") {
		t.Errorf("dyn-a did not say it placed the clusters again:\n%s", log)
	}

	c.stop()
	d, _ := s.start(t, "dyn-d")
	waitLog(t, d, "every shard is held")
	if _, names, _ := s.claims(t.Context()); len(names) != 3 || names[2] != "dyn-c" {
		t.Errorf("dyn-d took dyn-c's number before its claim went stale: %q", names)
	}
	s.waitClaims(t, "dyn-a", "dyn-b", "dyn-d")
	s.waitOwners(t, "dyn-a", "dyn-b", "dyn-d")

	// Scaled down to 2, the claims are reset and claimed again: two of
	// the three hold 0 and 1, the third none, and the clusters follow.
	s.scale(t, 2)
	var names []string
	err = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, names, _ = s.claims(ctx)
		return len(names) == 2 && names[0] != "" && names[1] != "" && names[0] != names[1], nil
	})
	if err != nil {
		t.Fatalf("the claims were not taken again over 2 replicas: %q", names)
	}
	s.waitOwners(t, names...)
}

// heartbeat is the heartbeat time of claim n.
func (s *dynamicSetup) heartbeat(t *testing.T, n int) metav1.Time {
	t.Helper()
	var cm corev1.ConfigMap
	if err := s.c.Get(t.Context(), client.ObjectKey{Namespace: s.ns, Name: shard.ShardConfigMapName}, &cm); err != nil {
		t.Fatal(err)
	}
	var list []shard.ShardClaim
	if err := json.Unmarshal([]byte(cm.Data[shard.ShardMappingKey]), &list); err != nil || len(list) <= n {
		t.Fatalf("claims %s: %v", cm.Data[shard.ShardMappingKey], err)
	}
	return list[n].HeartbeatTime
}

// waitLog waits until the operator's log has sub.
func waitLog(t *testing.T, op *runningOperator, sub string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return strings.Contains(op.log.String(), sub), nil
	})
	if err != nil {
		t.Fatalf("log never said %q:\n%s", sub, op.log)
	}
}

// Two operators asking for the same number ($ARGOCD_CONTROLLER_SHARD 1)
// under dynamic distribution: the second says, in its log and a Warning
// Event on argocd-app-controller-shard-cm naming both, that the first
// holds it, and owns nothing (Argo CD would have both act on it). When
// the first stops, the second takes the number once the claim is stale.
func TestDynamicDistributionDuplicateShard(t *testing.T) {
	s := startDynamic(t, "dup", 2, "second")
	t.Setenv(EnvShard, "1")
	a, _ := s.start(t, "dup-a")
	s.waitClaims(t, "", "dup-a")
	b, bMetrics := s.start(t, "dup-b")
	s.createApps(t)
	s.waitOwners(t, "", "dup-a") // in-cluster's app (number 0) has no owner
	waitLog(t, b, "which replica dup-a holds")
	want := "replica dup-b asks for shard 1 ($ARGOCD_CONTROLLER_SHARD), which replica dup-a holds"
	waitObjectEvents(t, s.c, s.ns, "ConfigMap", shard.ShardConfigMapName, func(notes map[string][]string) bool {
		for _, n := range notes[ReasonShardClaimConflict] {
			if strings.HasPrefix(n, want) {
				return true
			}
		}
		return false
	})
	waitMetric(t, bMetrics, `gitops_shard_apps{algorithm="round-robin",member="dup-b",replica=""} 0`)
	if _, names, _ := s.claims(t.Context()); strings.Join(names, ",") != ",dup-a" {
		t.Errorf("dup-b wrote over dup-a's claim: %q", names)
	}

	a.stop()
	s.waitClaims(t, "", "dup-b")
	s.waitOwners(t, "", "dup-b")
}

// waitObjectEvents polls the notes, by reason, of the Events on the
// object kind ns/name until ok holds of them.
func waitObjectEvents(t *testing.T, c client.Client, ns, kind, name string, ok func(map[string][]string) bool) {
	t.Helper()
	var notes map[string][]string
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var list eventsv1.EventList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, nil
		}
		notes = map[string][]string{}
		for _, e := range list.Items {
			if e.Regarding.Kind == kind && e.Regarding.Name == name {
				notes[e.Reason] = append(notes[e.Reason], e.Note)
			}
		}
		return ok(notes), nil
	})
	if err != nil {
		t.Errorf("Events of %s %s: %q", kind, name, notes)
	}
}

// A StatefulSet replica whose number is above $ARGOCD_CONTROLLER_REPLICAS
// acts as replica 0, as Argo CD's controller does, and says so in its log
// and a Warning Event on the Lease gitops-operator: it owns in-cluster's
// app.
func TestPlacementReplicaAboveCount(t *testing.T) {
	ns, dest := cluster.TestNamespace(t), cluster.TestNamespace(t)
	t.Setenv(EnvReplicas, "2")
	op := startReplica(t, ns, "-id", controllerName(5))
	createApps(t.Context(), t, testClient(t), shardApp(ns, dest, shardRepo(t, 1), "above", 0))
	waitApps(t.Context(), t, testClient(t), ns, 1, "owned by replica 5 as replica 0", func(a *v1alpha1.Application) bool {
		return healthyApp(a) && a.Annotations[controller.AnnotationOwner] == controllerName(5)
	})
	want := "replica argocd-application-controller-5: its number 5 is above the replica count 2 ($ARGOCD_CONTROLLER_REPLICAS): it acts as replica 0"
	waitLog(t, op, want)
	waitObjectEvents(t, testClient(t), ns, "Lease", LeaseName, func(notes map[string][]string) bool {
		return len(notes[ReasonReplicaOutOfRange]) == 1 && strings.HasPrefix(notes[ReasonReplicaOutOfRange][0], want)
	})
}

// A replica whose number equals the replica count owns no cluster, as in
// Argo CD's controller (it only moves numbers above the count to 0), and
// says so; one above it is 0.
func TestPlacementReplicaAtCount(t *testing.T) {
	f := flags{replicas: 2, controllerShard: -1, set: map[string]bool{}}
	for name, want := range map[string]int{controllerName(2): 2, controllerName(3): 0, controllerName(1): 1} {
		var said []string
		_, n, self, ok := byClusterSettings(f, "", name, logr.Discard(), func(reason, msg string) { said = append(said, reason+": "+msg) })
		if !ok || n != 2 || self != want {
			t.Errorf("%s: replica %d of %d (%v), want %d of 2", name, self, n, ok, want)
		}
		if (want != 1) != (len(said) == 1) {
			t.Errorf("%s: warned %q", name, said)
		}
		if want == 2 && !strings.Contains(strings.Join(said, ""), "it owns no cluster") {
			t.Errorf("%s: warned %q", name, said)
		}
	}
}

// Two StatefulSet replicas with one number (the second's
// $ARGOCD_CONTROLLER_SHARD 0 as the first's Pod name says): the second,
// whose Lease was taken later, says so in its log and a Warning Event on
// its Lease naming both, and does not act (Argo CD would have both act):
// the app stays the first's through a refresh. When the first stops, the
// second acts.
func TestPlacementDuplicateReplica(t *testing.T) {
	ns, dest := cluster.TestNamespace(t), cluster.TestNamespace(t)
	c := testClient(t)
	t.Setenv(EnvReplicas, "2")
	a := startReplica(t, ns, "-id", controllerName(0))
	createApps(t.Context(), t, c, shardApp(ns, dest, shardRepo(t, 1), "dupstatic", 0))
	owned := func(by string) {
		t.Helper()
		waitApps(t.Context(), t, c, ns, 1, "Synced, Healthy and owned by "+by, func(a *v1alpha1.Application) bool {
			return healthyApp(a) && a.Annotations[controller.AnnotationOwner] == by
		})
	}
	owned(controllerName(0))
	b := startReplica(t, ns, "-id", "dupstatic-b", "-controller-shard", "0", "-install-crd=false")
	want := "replicas argocd-application-controller-0 and dupstatic-b both are replica 0: dupstatic-b, which took its Lease later, does not act"
	waitLog(t, b, want)
	waitObjectEvents(t, c, ns, "Lease", "gitops-operator-dupstatic-b", func(notes map[string][]string) bool {
		return len(notes[ReasonDuplicateReplica]) == 1 && strings.HasPrefix(notes[ReasonDuplicateReplica][0], want)
	})
	rec := recordApps(t.Context(), t, c, ns)
	refreshAll(t.Context(), t, c, ns, 1)
	if owners, _ := rec.seen(); len(owners["dupstatic0"]) > 1 {
		t.Errorf("the second replica acted on the app: owners %v", owners)
	}
	if strings.Contains(a.log.String(), "does not act") {
		t.Errorf("the first replica stood down:\n%s", a.log)
	}
	a.stop()
	owned("dupstatic-b")
}
