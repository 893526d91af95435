package appsets_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/examples/operator/appsets"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// loadBalancer is a Service that stays Progressing until its status has
// an ingress (no cloud controller runs here: the test writes it).
const loadBalancer = `apiVersion: v1
kind: Service
metadata: {name: edge}
spec:
  type: LoadBalancer
  selector: {app: edge}
  ports: [{port: 80}]
`

// TestRollingSync: a RollingSync of three steps (dev; qa, maxUpdate 1;
// prod). The generated Applications have no automated sync; the set syncs
// them by writing their operation field. dev's sync succeeds and its
// Service stays Progressing, and while it does no qa or prod Application
// is synced; once it is
// Healthy, qa's two Applications are synced one after the other, and prod
// only after both are Synced and Healthy.
func TestRollingSync(t *testing.T) {
	t.Parallel()
	// A sync ends once applied, as in Argo CD: dev's sync succeeds while
	// its Service is still Progressing.
	e := start(t, func(o *gitops.Options) { o.Sync.WaitFinalWave = false })
	url := e.repo(t, "roll", map[string]string{"apps/lb/svc.yaml": loadBalancer, "apps/one/cm.yaml": configMap("one"),
		"apps/two/cm.yaml": configMap("two"), "apps/three/cm.yaml": configMap("three")})
	dest := cluster.TestNamespace(t)
	e.createSet(t, fmt.Sprintf(`
metadata: {name: roll}
spec:
  generators:
  - list:
      elements:
      - {name: dev, env: dev, folder: apps/lb}
      - {name: qa-a, env: qa, folder: apps/one}
      - {name: qa-b, env: qa, folder: apps/two}
      - {name: prod, env: prod, folder: apps/three}
  strategy:
    type: RollingSync
    rollingSync:
      steps:
      - matchExpressions: [{key: env, operator: In, values: [dev]}]
      - matchExpressions: [{key: env, operator: In, values: [qa]}]
        maxUpdate: 1
      - matchExpressions: [{key: env, operator: In, values: [prod]}]
  template:
    metadata:
      name: 'roll-{{name}}'
      labels: {env: '{{env}}'}
    spec:
      project: default
      source: {repoURL: %s, targetRevision: main, path: '{{folder}}'}
      destination: {server: https://kubernetes.default.svc, namespace: %s}
      syncPolicy: {automated: {prune: true}}
`, url, dest))
	later := []string{"roll-qa-a", "roll-qa-b", "roll-prod"}
	all := append([]string{"roll-dev"}, later...)

	// Step 1 synced, its Service Progressing; the later steps wait.
	eventually(t, "dev synced and Progressing, the others compared and OutOfSync", func() (bool, string) {
		dev := e.app(t, "roll-dev")
		if dev == nil || dev.Status.Sync.Status != "Synced" || dev.Status.Health.Status != "Progressing" {
			return false, fmt.Sprintf("dev: %+v", dev)
		}
		for _, n := range later {
			a := e.app(t, n)
			if a == nil || a.Status.Sync.Status != "OutOfSync" {
				return false, fmt.Sprintf("%s: %+v", n, a)
			}
		}
		return true, ""
	})
	eventually(t, "the set's rollout status", func() (bool, string) {
		s := e.set(t, "roll")
		c, _ := condition(s, appsets.ConditionRolloutProgressing)
		st := appStatuses(s)
		ok := c.Status == "True" && st["roll-dev"].Status == appsets.RolloutProgressing && st["roll-dev"].Step == "1" &&
			st["roll-qa-a"].Status == appsets.RolloutWaiting && st["roll-qa-b"].Step == "2" &&
			st["roll-prod"].Status == appsets.RolloutWaiting
		return ok, fmt.Sprintf("%+v", s.Status)
	})
	dev := e.app(t, "roll-dev")
	op := dev.Status.OperationState
	if op == nil || op.Phase != "Succeeded" || op.Operation.InitiatedBy.Username != appsets.SyncInitiator || op.Operation.Sync == nil || !op.Operation.Sync.Prune {
		t.Fatalf("dev's sync was not the set's (with the template's prune): %+v", op)
	}
	for _, n := range all {
		a := e.app(t, n)
		if a.Spec.SyncPolicy != nil && a.Spec.SyncPolicy.Automated != nil {
			t.Fatalf("%s has automated sync under RollingSync", n)
		}
		if n != "roll-dev" && (a.Operation != nil || a.Status.OperationState != nil) {
			t.Fatalf("%s was synced while step 1 was not Healthy: %+v %+v", n, a.Operation, a.Status.OperationState)
		}
	}

	// dev's load balancer gets its address: dev is Healthy, and the rest follows.
	healthyAt := metav1.NewTime(time.Now().Truncate(time.Second))
	patch := []byte(`{"status":{"loadBalancer":{"ingress":[{"ip":"192.0.2.10"}]}}}`)
	if _, err := e.cs.CoreV1().Services(dest).Patch(context.Background(), "edge", types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	e.waitSynced(t, all...)
	eventually(t, "the rollout complete", func() (bool, string) {
		s := e.set(t, "roll")
		c, _ := condition(s, appsets.ConditionRolloutProgressing)
		st := appStatuses(s)
		for _, n := range all {
			if st[n].Status != appsets.RolloutHealthy {
				return false, fmt.Sprintf("%+v", s.Status)
			}
		}
		return c.Status == "False" && c.Reason == appsets.ReasonApplicationSetRolloutComplete, fmt.Sprintf("%+v", s.Status)
	})

	ops := map[string]*v1alpha1.OperationState{}
	for _, n := range later {
		a := e.app(t, n)
		s := a.Status.OperationState
		if s == nil || s.FinishedAt == nil || s.Operation.InitiatedBy.Username != appsets.SyncInitiator {
			t.Fatalf("%s was not synced by the set: %+v", n, s)
		}
		if s.StartedAt.Before(&healthyAt) {
			t.Fatalf("%s's sync started at %s, before dev was Healthy (%s)", n, s.StartedAt, healthyAt)
		}
		ops[n] = s
	}
	first, second := ops["roll-qa-a"], ops["roll-qa-b"]
	if second.StartedAt.Before(&first.StartedAt) {
		first, second = second, first
	}
	if second.StartedAt.Before(first.FinishedAt) {
		t.Fatalf("maxUpdate 1: qa's syncs overlapped: %s-%s and %s-%s", first.StartedAt, first.FinishedAt, second.StartedAt, second.FinishedAt)
	}
	if ops["roll-prod"].StartedAt.Before(second.FinishedAt) {
		t.Fatalf("prod's sync started at %s, before qa's last finished at %s", ops["roll-prod"].StartedAt, second.FinishedAt)
	}
}

func appStatuses(s *v1alpha1.ApplicationSet) map[string]v1alpha1.ApplicationSetApplicationStatus {
	out := map[string]v1alpha1.ApplicationSetApplicationStatus{}
	for _, st := range s.Status.ApplicationStatus {
		out[st.Application] = st
	}
	return out
}
