package controller_test

import (
	"testing"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/engine"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSyncWindowBlocksAutomatedButNotManualSync: an open deny window with
// manualSync stops automated syncs (a SyncWindowBlocked condition, no
// operation recorded, nothing applied) but lets a requested one through.
func TestSyncWindowBlocksAutomatedButNotManualSync(t *testing.T) {
	o := startOperator(t, func(opts *gitops.Options) {
		opts.Projects = []gitops.Project{{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: engine.ProjectSpec{
			SourceRepos:              []string{"*"},
			Destinations:             []gitops.ApplicationDestination{{Server: "*", Name: "*", Namespace: "*"}},
			ClusterResourceWhitelist: []v1alpha1.ClusterResourceRestrictionItem{{Group: "*", Kind: "*"}},
			// The test's Applications live in their own namespace: the
			// project must serve it (apps in any namespace).
			SourceNamespaces: []string{"*"},
			SyncWindows:      []engine.SyncWindow{{Kind: "deny", Schedule: "* * * * *", Duration: "1h", Applications: []string{"*"}, ManualSync: true}},
		}}}
	})
	dest := cluster.TestNamespace(t)
	repo := repoDir(t, map[string]string{"app/web.yaml": webManifests})
	o.create(t, newApp(o.ns, appSpec{name: "frozen", repo: repo, dest: dest, automated: true}))
	got := o.waitApp(t, "frozen", "SyncWindowBlocked", func(a observed) bool {
		for _, c := range a.Status.Conditions {
			if c.Type == string(appstatus.ConditionSyncWindowBlocked) {
				return true
			}
		}
		return false
	})
	if got.Status.OperationState != nil || got.Status.Sync.Status != "OutOfSync" {
		t.Errorf("a blocked automated sync left: %s", got)
	}
	if _, err := o.configMap(t, dest, "settings"); !apierrors.IsNotFound(err) {
		t.Errorf("a blocked automated sync applied the ConfigMap (err %v)", err)
	}

	o.patch(t, "frozen", map[string]any{"operation": map[string]any{"sync": map[string]any{}, "initiatedBy": map[string]any{"username": "oncall"}}})
	got = o.waitApp(t, "frozen", "manual sync through the window", func(a observed) bool {
		return a.Operation == nil && a.Status.OperationState != nil && a.Status.OperationState.FinishedAt != nil
	})
	if got.Status.OperationState.Phase != "Succeeded" {
		t.Errorf("manual sync in a manualSync window: %s", got)
	}
	if _, err := o.configMap(t, dest, "settings"); err != nil {
		t.Errorf("ConfigMap: %v", err)
	}
}

// TestSyncWindowKeepsRequestedSyncRunning: a requested sync that an open
// deny window (without manualSync) blocks is not ended as an error: as in
// Argo CD's controller, the operation stays, Running, with the message
// "Sync operation blocked by sync window", and nothing is applied.
func TestSyncWindowKeepsRequestedSyncRunning(t *testing.T) {
	o := startOperator(t, func(opts *gitops.Options) {
		opts.Projects = []gitops.Project{{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: engine.ProjectSpec{
			SourceRepos:              []string{"*"},
			Destinations:             []gitops.ApplicationDestination{{Server: "*", Name: "*", Namespace: "*"}},
			ClusterResourceWhitelist: []v1alpha1.ClusterResourceRestrictionItem{{Group: "*", Kind: "*"}},
			SourceNamespaces:         []string{"*"},
			SyncWindows:              []engine.SyncWindow{{Kind: "deny", Schedule: "* * * * *", Duration: "1h", Applications: []string{"*"}}},
		}}}
	})
	dest := cluster.TestNamespace(t)
	repo := repoDir(t, map[string]string{"app/web.yaml": webManifests})
	o.create(t, newApp(o.ns, appSpec{name: "frozen", repo: repo, dest: dest}))
	o.patch(t, "frozen", map[string]any{"operation": map[string]any{"sync": map[string]any{}, "initiatedBy": map[string]any{"username": "oncall"}}})
	got := o.waitApp(t, "frozen", "the requested sync kept, blocked", func(a observed) bool {
		op := a.Status.OperationState
		return op != nil && op.Message == "Sync operation blocked by sync window"
	})
	if op := got.Status.OperationState; got.Operation == nil || op.Phase != "Running" || op.FinishedAt != nil {
		t.Errorf("a blocked requested sync: %s", got)
	}
	if _, err := o.configMap(t, dest, "settings"); !apierrors.IsNotFound(err) {
		t.Errorf("a blocked requested sync applied the ConfigMap (err %v)", err)
	}
}
