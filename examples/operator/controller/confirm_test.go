package controller_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/examples/operator/controller"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// TestDeletionApprovedConfirmsPrune: a sync that would prune an object
// marked Prune=confirm waits (Running, the operation kept); an approval
// older than the operation's start confirms nothing; one given after it
// lets the prune run and the operation finish, as Argo CD's
// argocd.argoproj.io/deletion-approved does.
func TestDeletionApprovedConfirmsPrune(t *testing.T) {
	t.Parallel()
	o := startOperator(t, nil)
	dest := cluster.TestNamespace(t)
	repo := repoDir(t, map[string]string{
		"app/keep.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: keep}\n",
		"app/guarded.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: guarded, annotations: {argocd.argoproj.io/sync-options: Prune=confirm}}\n",
	})
	o.create(t, newApp(o.ns, appSpec{name: "confirm", repo: repo, dest: dest}))
	o.patch(t, "confirm", map[string]any{"operation": map[string]any{"sync": map[string]any{}}})
	o.waitApp(t, "confirm", "first sync", func(a observed) bool { return a.Operation == nil && syncedHealthy(a) })

	if err := os.Remove(filepath.Join(repo, "app/guarded.yaml")); err != nil {
		t.Fatal(err)
	}
	stale := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	o.patch(t, "confirm", map[string]any{
		"metadata":  map[string]any{"annotations": map[string]any{controller.AnnotationDeletionApproved: stale}},
		"operation": map[string]any{"sync": map[string]any{"prune": true}}})
	got := o.waitApp(t, "confirm", "the prune waiting for confirmation", func(a observed) bool {
		s := a.Status.OperationState
		return s != nil && s.Phase == "Running" && strings.Contains(s.Message, "confirmation")
	})
	started := got.Status.OperationState.StartedAt.Time
	if _, err := o.configMap(t, dest, "guarded"); err != nil {
		t.Fatalf("pruned without a confirmation (an approval older than the operation): %v", err)
	}
	if got.Operation == nil {
		t.Fatal("the waiting operation was cleared")
	}

	approved := started.Add(time.Second).UTC().Format(time.RFC3339)
	o.patch(t, "confirm", map[string]any{"metadata": map[string]any{"annotations": map[string]any{controller.AnnotationDeletionApproved: approved}}})
	got = o.waitApp(t, "confirm", "the confirmed prune done", func(a observed) bool {
		s := a.Status.OperationState
		return a.Operation == nil && s != nil && s.Phase == "Succeeded" && s.FinishedAt != nil
	})
	if !got.Status.OperationState.StartedAt.Time.Equal(started) {
		t.Errorf("the operation restarted instead of going on: started %v, was %v", got.Status.OperationState.StartedAt, started)
	}
	if _, err := o.configMap(t, dest, "guarded"); !apierrors.IsNotFound(err) {
		t.Fatalf("the confirmed prune did not delete: %v", err)
	}
	if _, err := o.configMap(t, dest, "keep"); err != nil {
		t.Fatalf("the kept object: %v", err)
	}
	o.waitApp(t, "confirm", "Synced after the prune", syncedHealthy)
}
