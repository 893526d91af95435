package controller_test

import (
	"strings"
	"testing"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/examples/operator/controller"
)

// badManifest is refused by the API server (a name with capitals).
const badManifest = `apiVersion: v1
kind: ConfigMap
metadata: {name: Not_A_Name}
data: {a: b}
`

// TestFailedSyncIsRecordedAndNotRetried: an automated sync the API server
// refuses is recorded as failed, naming the object, and is not tried again
// at the same revision (a refresh request proves the app was looked at).
func TestFailedSyncIsRecordedAndNotRetried(t *testing.T) {
	o := startOperator(t, nil)
	dest := cluster.TestNamespace(t)
	repo := repoDir(t, map[string]string{"app/bad.yaml": badManifest})
	o.create(t, newApp(o.ns, appSpec{name: "refused", repo: repo, dest: dest, automated: true}))
	got := o.waitApp(t, "refused", "a failed sync", func(a observed) bool {
		s := a.Status.OperationState
		return s != nil && s.FinishedAt != nil
	})
	first := got.Status.OperationState
	if (first.Phase != "Failed" && first.Phase != "Error") || !strings.Contains(first.Message+rowsMessages(first), "Not_A_Name") {
		t.Errorf("operationState: %s", got)
	}
	o.patch(t, "refused", map[string]any{"metadata": map[string]any{"annotations": map[string]any{controller.AnnotationRefresh: "normal"}}})
	got = o.waitApp(t, "refused", "the refresh", func(a observed) bool {
		_, ok := a.Annotations[controller.AnnotationRefresh]
		return !ok
	})
	if s := got.Status.OperationState; s == nil || !s.StartedAt.Equal(&first.StartedAt) || len(got.Status.History) != 0 {
		t.Errorf("a failed revision was synced again: %s", got)
	}
}

// TestOperationWithoutSyncIsAnError: an operation that asks for no sync is
// recorded as an error and removed, not left to block the app.
func TestOperationWithoutSyncIsAnError(t *testing.T) {
	o := startOperator(t, nil)
	repo := repoDir(t, map[string]string{"app/web.yaml": webManifests})
	o.create(t, newApp(o.ns, appSpec{name: "nosync", repo: repo, dest: "default"}))
	o.waitApp(t, "nosync", "first refresh", func(a observed) bool { return a.Status.Sync.Status != "" })
	o.patch(t, "nosync", map[string]any{"operation": map[string]any{"initiatedBy": map[string]any{"username": "bob"}}})
	got := o.waitApp(t, "nosync", "operation removed", func(a observed) bool {
		return a.Operation == nil && a.Status.OperationState != nil
	})
	if s := got.Status.OperationState; s.Phase != "Error" || s.Operation.InitiatedBy.Username != "bob" || s.FinishedAt == nil {
		t.Errorf("operationState: %s", got)
	}
}

func rowsMessages(s *v1alpha1.OperationState) string {
	if s.SyncResult == nil {
		return ""
	}
	var b strings.Builder
	for _, r := range s.SyncResult.Resources {
		b.WriteString(r.Name + ": " + r.Message + "\n")
	}
	return b.String()
}
