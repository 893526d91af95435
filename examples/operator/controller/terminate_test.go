package controller_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/examples/operator/controller"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestTerminatingPhaseTerminatesTheOperation: a requested sync waits on a
// Deployment that never becomes healthy (its Pods fit no node); setting
// status.operationState.phase to Terminating, as `argocd app terminate-op`
// does, ends it Failed with "operation terminated" long before the wave
// timeout, the next wave is never applied, and the operation is cleared.
func TestTerminatingPhaseTerminatesTheOperation(t *testing.T) {
	t.Parallel()
	o := startOperator(t, nil)
	dest := cluster.TestNamespace(t)
	repo := repoDir(t, map[string]string{
		"app/stuck.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: stuck}
spec:
  replicas: 1
  selector: {matchLabels: {app: stuck}}
  template:
    metadata: {labels: {app: stuck}}
    spec:
      nodeSelector: {no-such-node: "true"}
      containers: [{name: c, image: nginx}]
`,
		"app/later.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: later, annotations: {argocd.argoproj.io/sync-wave: \"1\"}}\n",
	})
	o.create(t, newApp(o.ns, appSpec{name: "stuck", repo: repo, dest: dest}))
	o.patch(t, "stuck", map[string]any{"operation": map[string]any{"sync": map[string]any{}}})
	o.waitApp(t, "stuck", "the sync Running", func(a observed) bool {
		return a.Status.OperationState != nil && a.Status.OperationState.Phase == "Running"
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	patch := []byte(`{"status":{"operationState":{"phase":"` + controller.PhaseTerminating + `"}}}`)
	if err := o.c.Status().Patch(ctx, ref(o.ns, "stuck"), client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	got := o.waitApp(t, "stuck", "the operation terminated", func(a observed) bool {
		s := a.Status.OperationState
		return a.Operation == nil && s != nil && s.Phase == "Failed" && s.FinishedAt != nil
	})
	if !strings.Contains(got.Status.OperationState.Message, "terminated") {
		t.Fatalf("terminated operation: %s", got)
	}
	if _, err := o.configMap(t, dest, "later"); !apierrors.IsNotFound(err) {
		t.Fatalf("the wave after the terminated one was applied: %v", err)
	}
}
