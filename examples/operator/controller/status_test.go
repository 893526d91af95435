package controller

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/hooks"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
)

func TestRefreshedStatusKeepsConditionTimesAndOperation(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := appstatus.Status{Sync: appstatus.OutOfSync, Health: health.Status{Code: health.Progressing, Message: "rolling"}, Revision: "abc",
		Resources:  []appstatus.ResourceRow{{Key: resource.Key{Group: "apps", Kind: "Deployment", Namespace: "web", Name: "web"}, Status: appstatus.OutOfSync, Health: &health.Status{Code: health.Progressing}}},
		Conditions: []appstatus.Condition{{Type: appstatus.ConditionSharedResource, Message: "shared"}}}
	prev := v1alpha1.ApplicationStatus{OperationState: &v1alpha1.OperationState{Phase: "Succeeded"}, History: []v1alpha1.RevisionHistory{{ID: 0, Revision: "old"}}}
	first := appstatus.Refreshed(prev, st, 1, t0)
	if first.Sync.Status != "OutOfSync" || first.Sync.Revision != "abc" || first.Health.Status != "Progressing" || first.Health.Message != "rolling" {
		t.Errorf("sync/health: %+v %+v", first.Sync, first.Health)
	}
	if len(first.Resources) != 1 || first.Resources[0].Group != "apps" || first.Resources[0].Health.Status != "Progressing" {
		t.Errorf("resources: %+v", first.Resources)
	}
	if first.OperationState != prev.OperationState || len(first.History) != 1 {
		t.Error("operationState or history lost")
	}
	second := appstatus.Refreshed(first, st, 1, t0.Add(time.Hour))
	if !second.Conditions[0].LastTransitionTime.Equal(first.Conditions[0].LastTransitionTime) {
		t.Error("an unchanged condition got a new transition time")
	}
	if !sameStatus(first, second) {
		t.Error("two refreshes with the same outcome differ in more than reconciledAt")
	}
	st.Conditions[0].Message = "shared differently"
	if third := appstatus.Refreshed(second, st, 1, t0.Add(2*time.Hour)); sameStatus(second, third) || !third.Conditions[0].LastTransitionTime.Time.Equal(t0.Add(2*time.Hour)) {
		t.Error("a changed condition is not a change")
	}
	multi := appstatus.Refreshed(prev, appstatus.Status{Sync: appstatus.Synced, Revision: "a,b"}, 2, t0)
	if multi.Sync.Revision != "" || strings.Join(multi.Sync.Revisions, " ") != "a b" {
		t.Errorf("multi-source revisions: %+v", multi.Sync)
	}
}

func TestSyncResultCodes(t *testing.T) {
	key := resource.Key{Kind: "ConfigMap", Namespace: "ns", Name: "x"}
	res := sync.Result{Phase: sync.Succeeded, State: sync.State{Revision: "r1"}, Results: []sync.ResourceResult{
		{Key: key, Phase: hooks.Sync, Status: sync.TaskSucceeded, Action: sync.Configured},
		{Key: key, Phase: hooks.Sync, Status: sync.TaskSucceeded, Action: sync.Pruned},
		{Key: key, Phase: hooks.Sync, Status: sync.TaskSkipped, Action: sync.Skipped, Message: "ignored (Prune=false)"},
		{Key: key, Phase: hooks.Sync, Status: sync.TaskFailed, Message: "denied"},
		{Key: resource.Key{Group: "batch", Kind: "Job", Namespace: "ns", Name: "migrate"}, Phase: hooks.PreSync, Hook: true, Status: sync.TaskSucceeded},
	}}
	out := appstatus.SyncResult(res, 1)
	var codes []string
	for _, r := range out.Resources {
		codes = append(codes, r.Status)
	}
	if got := strings.Join(codes, ","); got != "Synced,Pruned,PruneSkipped,SyncFailed,Synced" || out.Revision != "r1" {
		t.Errorf("codes %s revision %q", got, out.Revision)
	}
	if h := out.Resources[4]; h.HookType != "PreSync" || h.HookPhase != "Succeeded" || h.SyncPhase != "PreSync" {
		t.Errorf("hook row %+v", h)
	}
}

func TestWithHistory(t *testing.T) {
	var h []v1alpha1.RevisionHistory
	limit := int64(2)
	for _, rev := range []string{"a", "a", "b", "c"} {
		h = appstatus.WithHistory(h, v1alpha1.RevisionHistory{Revision: rev}, &limit)
	}
	if len(h) != 2 || h[0].Revision != "b" || h[0].ID != 1 || h[1].Revision != "c" || h[1].ID != 2 {
		t.Errorf("history %+v: want b (1), c (2): a repeat is not a deployment, and only %d kept", h, limit)
	}
}

// TestInvalidSpecNamesBadFields: a spec Validate refuses becomes an
// InvalidSpecError condition naming every bad field, without the document
// and line numbers of a manifest, and nothing compared; history stays.
func TestInvalidSpecNamesBadFields(t *testing.T) {
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{
		Source:      &v1alpha1.ApplicationSource{RepoURL: "/repo"},
		Sources:     []v1alpha1.ApplicationSource{{RepoURL: "/repo"}},
		Destination: v1alpha1.ApplicationDestination{Server: "https://x", Name: "x"},
	}}
	app.Namespace, app.Name = "argocd", "bad"
	app.Status = v1alpha1.ApplicationStatus{Sync: v1alpha1.SyncStatus{Status: "Synced"}, History: []v1alpha1.RevisionHistory{{Revision: "r0"}},
		Resources: []v1alpha1.ResourceStatus{{Kind: "ConfigMap"}}, ResourceTree: &v1alpha1.ApplicationTree{}}
	next := invalidSpec(app.Status, app.Validate(), time.Now())
	if len(next.Conditions) != 1 || next.Conditions[0].Type != string(appstatus.ConditionInvalidSpec) {
		t.Fatalf("conditions %+v", next.Conditions)
	}
	for _, want := range []string{"argocd/bad", "spec.sources", "spec.destination"} {
		if msg := next.Conditions[0].Message; !strings.Contains(msg, want) || strings.Contains(msg, "line") {
			t.Errorf("condition %q: want %s named, and no line numbers", msg, want)
		}
	}
	if next.Sync.Status != "Unknown" || next.Resources != nil || next.ResourceTree != nil || len(next.History) != 1 {
		t.Errorf("status of an invalid spec: %+v", next)
	}
}

func TestKeepLastGood(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	good := appstatus.Refreshed(v1alpha1.ApplicationStatus{}, appstatus.Status{Sync: appstatus.Synced, Health: health.Status{Code: health.Healthy}, Revision: "r1",
		Resources: []appstatus.ResourceRow{{Key: resource.Key{Kind: "ConfigMap", Namespace: "ns", Name: "x"}, Status: appstatus.Synced}}}, 1, t0)
	failed := appstatus.Status{Sync: appstatus.Unknown, Health: health.Status{Code: health.Unknown},
		Conditions: []appstatus.Condition{{Type: appstatus.ConditionComparisonError, Message: "repository down"}}}
	next := appstatus.Refreshed(good, failed, 1, t0.Add(time.Minute))

	kept := keepLastGood(good, next, failed, errors.New("repository down"))
	// The last good revision and resources stay; the sync status is
	// Unknown and the time the failure's (it said Synced, with the last
	// good time, as if all were well).
	if kept.Sync.Status != "Unknown" || kept.Sync.Revision != "r1" || len(kept.Resources) != 1 || !kept.ReconciledAt.Equal(next.ReconciledAt) {
		t.Errorf("a failed refresh: %+v", kept)
	}
	if len(kept.Conditions) != 1 || kept.Conditions[0].Message != "repository down" {
		t.Errorf("the failure is not reported: %+v", kept.Conditions)
	}
	gone := keepLastGood(good, next, failed, &engine.ClusterUnavailableError{Cluster: "in-cluster", Err: errors.New("refused")})
	if gone.Sync.Status != "Unknown" || len(gone.Resources) != 0 {
		t.Errorf("an unavailable cluster kept the old status: %+v", gone)
	}
	if first := keepLastGood(v1alpha1.ApplicationStatus{}, next, failed, errors.New("x")); first.Sync.Status != "Unknown" {
		t.Errorf("an app never compared: %+v", first)
	}
}

// TestTreeOnlyChangesWaitForTheDelay: a change of the resource tree alone
// waits for the rest of TreeWriteDelay after the last write; any other
// change, an asked-for refresh, a delay already past or a negative delay
// writes at once.
func TestTreeOnlyChangesWaitForTheDelay(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := &Reconciler{opts: Options{TreeWriteDelay: 10 * time.Second}, now: func() time.Time { return t0.Add(3 * time.Second) }}
	at := metav1.NewTime(t0)
	prev := v1alpha1.ApplicationStatus{ReconciledAt: &at, Sync: v1alpha1.SyncStatus{Status: "Synced"}, Health: v1alpha1.HealthStatus{Status: "Progressing"},
		ResourceTree: &v1alpha1.ApplicationTree{Nodes: []v1alpha1.ResourceNode{{ResourceRef: v1alpha1.ResourceRef{Kind: "Deployment", Name: "web"}}}}}
	treeOnly := prev
	treeOnly.ResourceTree = &v1alpha1.ApplicationTree{Nodes: append(slices.Clone(prev.ResourceTree.Nodes), v1alpha1.ResourceNode{ResourceRef: v1alpha1.ResourceRef{Kind: "ReplicaSet", Name: "web-1"}})}
	treeOnly.Summary.Images = []string{"nginx"}
	healthy := treeOnly
	healthy.Health.Status = "Healthy"
	app := &v1alpha1.Application{}
	asked := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AnnotationRefresh: "normal"}}}
	if got := r.treeWait(app, prev, treeOnly); got != 7*time.Second {
		t.Errorf("tree-only change 3 s after the last write waits %v, want 7s", got)
	}
	for name, got := range map[string]time.Duration{
		"health changed too":  r.treeWait(app, prev, healthy),
		"nothing changed":     r.treeWait(app, prev, prev),
		"a refresh asked for": r.treeWait(asked, prev, treeOnly),
	} {
		if got != 0 {
			t.Errorf("%s: waits %v, want 0 (write now)", name, got)
		}
	}
	r.now = func() time.Time { return t0.Add(11 * time.Second) }
	if got := r.treeWait(app, prev, treeOnly); got != 0 {
		t.Errorf("tree-only change 11 s after the last write waits %v, want 0", got)
	}
	r.now = func() time.Time { return t0.Add(time.Second) }
	r.opts.TreeWriteDelay = -1
	if got := r.treeWait(app, prev, treeOnly); got != 0 {
		t.Errorf("negative delay: waits %v, want 0", got)
	}
}
