package controller_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/examples/operator/controller"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func (o *operator) configMap(t *testing.T, ns, name string) (*corev1.ConfigMap, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cm := &corev1.ConfigMap{}
	err := o.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, cm)
	return cm, err
}

func (o *operator) deployment(t *testing.T, ns, name string) (*appsv1.Deployment, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d := &appsv1.Deployment{}
	err := o.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, d)
	return d, err
}

// setGreeting changes the live ConfigMap behind the operator's back.
func (o *operator) setGreeting(t *testing.T, ns, value string) {
	t.Helper()
	cm, err := o.configMap(t, ns, "settings")
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["greeting"] = value
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := o.c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
}

// TestAutomatedAppIsSyncedAndSelfHealed: an Application with automated
// sync is deployed, its status says Synced and Healthy with a row per
// object, the sync is recorded, and drift is healed.
func TestAutomatedAppIsSyncedAndSelfHealed(t *testing.T) {
	o := startOperator(t, nil)
	dest := cluster.TestNamespace(t)
	repo := repoDir(t, map[string]string{"app/web.yaml": webManifests})
	o.create(t, newApp(o.ns, appSpec{name: "auto", repo: repo, dest: dest, automated: true}))

	got := o.waitApp(t, "auto", "Synced and Healthy", func(a observed) bool {
		return syncedHealthy(a) && len(a.Status.Resources) == 2 && a.Status.OperationState != nil && len(a.Status.History) == 1
	})
	rows := rowsStatus(got.Status.Resources)
	if rows["ConfigMap/settings"] != "Synced" || rows["Deployment/web"] != "Synced" {
		t.Errorf("resources = %v", rows)
	}
	for _, r := range got.Status.Resources {
		// A ConfigMap has no health (as in Argo CD); the Deployment does.
		if r.Namespace != dest || (r.Kind == "Deployment" && (r.Health == nil || r.Health.Status != "Healthy")) {
			t.Errorf("resource row %+v: want namespace %s and a healthy Deployment", r, dest)
		}
	}
	st := got.Status.OperationState
	if st.Phase != "Succeeded" || !st.Operation.InitiatedBy.Automated || st.FinishedAt == nil || st.SyncResult == nil ||
		len(st.SyncResult.Resources) != 2 || !strings.HasPrefix(st.SyncResult.Revision, "sha256:") {
		t.Errorf("operationState = %+v", st)
	}
	if got.Status.Sync.Revision != st.SyncResult.Revision || got.Status.History[0].Revision != st.SyncResult.Revision {
		t.Errorf("revisions differ: sync %q, synced %q, history %+v", got.Status.Sync.Revision, st.SyncResult.Revision, got.Status.History)
	}
	if got.Status.ReconciledAt == nil {
		t.Error("reconciledAt not set")
	}
	if _, err := o.configMap(t, dest, "settings"); err != nil {
		t.Errorf("ConfigMap: %v", err)
	}
	if _, err := o.deployment(t, dest, "web"); err != nil {
		t.Errorf("Deployment: %v", err)
	}

	// Drift: the cluster cache's event queues the app, selfHeal syncs it
	// back (after the self-heal timeout since the first sync).
	o.setGreeting(t, dest, "drifted")
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		cm, err := o.configMap(t, dest, "settings")
		return err == nil && cm.Data["greeting"] == "hello", nil
	})
	if err != nil {
		t.Fatalf("drift not healed: %v", err)
	}
	o.waitApp(t, "auto", "Synced again", syncedHealthy)
}

// TestManualOperationRunsOnceAndIsCleared: without automated sync the app
// is reported OutOfSync and nothing is applied; a dry-run operation applies
// nothing; a sync operation, as Argo CD writes it, syncs, is recorded in
// operationState and history, and is removed.
func TestManualOperationRunsOnceAndIsCleared(t *testing.T) {
	o := startOperator(t, nil)
	dest := cluster.TestNamespace(t)
	repo := repoDir(t, map[string]string{"app/web.yaml": webManifests})
	o.create(t, newApp(o.ns, appSpec{name: "manual", repo: repo, dest: dest}))

	got := o.waitApp(t, "manual", "OutOfSync and Missing", func(a observed) bool {
		return a.Status.Sync.Status == "OutOfSync" && a.Status.Health.Status == "Missing" && len(a.Status.Resources) == 2
	})
	if got.Status.OperationState != nil {
		t.Errorf("an operation ran without being asked: %+v", got.Status.OperationState)
	}

	o.patch(t, "manual", map[string]any{"operation": map[string]any{
		"sync": map[string]any{"dryRun": true, "prune": true}, "initiatedBy": map[string]any{"username": "alice"}}})
	got = o.waitApp(t, "manual", "dry run recorded", func(a observed) bool {
		return a.Operation == nil && a.Status.OperationState != nil && a.Status.OperationState.FinishedAt != nil
	})
	if got.Status.OperationState.Phase != "Succeeded" || !got.Status.OperationState.Operation.Sync.DryRun || len(got.Status.History) != 0 {
		t.Errorf("dry run: %s", got)
	}
	if _, err := o.configMap(t, dest, "settings"); !apierrors.IsNotFound(err) {
		t.Errorf("a dry run created the ConfigMap (err %v)", err)
	}

	// A sync limited to one object applies only it.
	o.patch(t, "manual", map[string]any{"operation": map[string]any{
		"sync": map[string]any{"resources": []any{map[string]any{"kind": "ConfigMap", "name": "settings", "namespace": dest}}}}})
	got = o.waitApp(t, "manual", "partial sync", func(a observed) bool {
		return a.Operation == nil && a.Status.OperationState != nil && len(a.Status.OperationState.Operation.Sync.Resources) == 1 &&
			a.Status.OperationState.FinishedAt != nil && rowsStatus(a.Status.Resources)["ConfigMap/settings"] == "Synced"
	})
	if rows := rowsStatus(got.Status.Resources); rows["Deployment/web"] != "OutOfSync" || got.Status.Sync.Status != "OutOfSync" {
		t.Errorf("after a sync of the ConfigMap alone: %v, %s", rows, got.Status.Sync.Status)
	}
	if _, err := o.deployment(t, dest, "web"); !apierrors.IsNotFound(err) {
		t.Errorf("a sync of the ConfigMap alone created the Deployment (err %v)", err)
	}

	o.patch(t, "manual", map[string]any{"operation": map[string]any{
		"sync":        map[string]any{"prune": true, "syncOptions": []any{"ServerSideApply=true"}},
		"initiatedBy": map[string]any{"username": "alice"}}})
	got = o.waitApp(t, "manual", "sync recorded and operation cleared", func(a observed) bool {
		s := a.Status.OperationState
		return a.Operation == nil && s != nil && s.Operation.Sync.Prune && s.FinishedAt != nil && syncedHealthy(a)
	})
	st := got.Status.OperationState
	if st.Phase != "Succeeded" || st.Operation.InitiatedBy.Username != "alice" || st.SyncResult == nil || len(st.SyncResult.Resources) != 2 {
		t.Errorf("operationState: %s", got)
	}
	for _, r := range st.SyncResult.Resources {
		if r.Status != "Synced" || r.SyncPhase != "Sync" || r.Namespace != dest {
			t.Errorf("sync result row %+v", r)
		}
	}
	// The partial sync was the first deployment of this revision; the full
	// sync at the same revision is not a new one.
	if len(got.Status.History) != 1 || got.Status.History[0].Revision != st.SyncResult.Revision || got.Status.History[0].ID != 0 {
		t.Errorf("history = %+v", got.Status.History)
	}
	if _, err := o.deployment(t, dest, "web"); err != nil {
		t.Errorf("Deployment: %v", err)
	}
}

// TestDriftAndSourceChangesAreReportedOutOfSync: a live change is seen
// without waiting for the interval (the cluster cache's events), and a
// change in the source after a refresh request (the annotation, which is
// then removed); neither is synced without automation.
func TestDriftAndSourceChangesAreReportedOutOfSync(t *testing.T) {
	o := startOperator(t, nil)
	dest := cluster.TestNamespace(t)
	repo := repoDir(t, map[string]string{"app/web.yaml": webManifests})
	o.create(t, newApp(o.ns, appSpec{name: "drift", repo: repo, dest: dest}))
	o.waitApp(t, "drift", "first refresh", func(a observed) bool { return a.Status.Sync.Status == "OutOfSync" })
	o.patch(t, "drift", map[string]any{"operation": map[string]any{"sync": map[string]any{}}})
	synced := o.waitApp(t, "drift", "synced", func(a observed) bool { return a.Operation == nil && syncedHealthy(a) })

	o.setGreeting(t, dest, "drifted")
	got := o.waitApp(t, "drift", "OutOfSync after drift", func(a observed) bool { return a.Status.Sync.Status == "OutOfSync" })
	if rows := rowsStatus(got.Status.Resources); rows["ConfigMap/settings"] != "OutOfSync" || rows["Deployment/web"] != "Synced" {
		t.Errorf("resources after drift = %v", rows)
	}
	if cm, _ := o.configMap(t, dest, "settings"); cm.Data["greeting"] != "drifted" {
		t.Errorf("the drift was synced without automation: %v", cm.Data)
	}

	o.patch(t, "drift", map[string]any{"operation": map[string]any{"sync": map[string]any{}}})
	o.waitApp(t, "drift", "synced again", func(a observed) bool { return a.Operation == nil && syncedHealthy(a) })

	writeFile(t, filepath.Join(repo, "app/web.yaml"), strings.Replace(webManifests, "greeting: hello", "greeting: bonjour", 1))
	o.patch(t, "drift", map[string]any{"metadata": map[string]any{"annotations": map[string]any{controller.AnnotationRefresh: "normal"}}})
	got = o.waitApp(t, "drift", "OutOfSync at a new revision", func(a observed) bool {
		return a.Status.Sync.Status == "OutOfSync" && a.Status.Sync.Revision != synced.Status.Sync.Revision
	})
	if rows := rowsStatus(got.Status.Resources); rows["ConfigMap/settings"] != "OutOfSync" {
		t.Errorf("resources after the source changed = %v", rows)
	}
	o.waitApp(t, "drift", "refresh annotation removed", func(a observed) bool {
		_, ok := a.Annotations[controller.AnnotationRefresh]
		return !ok
	})
}

// keptManifest is an object of the app that its deletion must leave.
const keptManifest = `apiVersion: v1
kind: ConfigMap
metadata:
  name: keep-me
  annotations: {argocd.argoproj.io/sync-options: Delete=false}
data: {kept: "yes"}
`

// TestDeletionWithFinalizerDeletesObjectsFirst: with either of Argo CD's
// resources finalizers, deleting the Application deletes its objects (but
// those marked Delete=false), and only then the Application.
func TestDeletionWithFinalizerDeletesObjectsFirst(t *testing.T) {
	for name, fin := range map[string]string{"foreground": controller.FinalizerForeground, "background": controller.FinalizerBackground} {
		t.Run(name, func(t *testing.T) {
			o := startOperator(t, nil)
			dest := cluster.TestNamespace(t)
			repo := repoDir(t, map[string]string{"app/web.yaml": webManifests, "app/kept.yaml": keptManifest})
			o.create(t, newApp(o.ns, appSpec{name: "cascade", repo: repo, dest: dest, automated: true, finalizers: []string{fin}}))
			o.waitApp(t, "cascade", "Synced and Healthy", func(a observed) bool { return syncedHealthy(a) && len(a.Status.Resources) == 3 })

			o.delete(t, "cascade")
			o.waitGone(t, "cascade")
			// The finalizer is removed only once the engine no longer sees
			// the objects, so they are gone now.
			if _, err := o.configMap(t, dest, "settings"); !apierrors.IsNotFound(err) {
				t.Errorf("ConfigMap still there after the Application was deleted (err %v)", err)
			}
			if _, err := o.deployment(t, dest, "web"); !apierrors.IsNotFound(err) {
				t.Errorf("Deployment still there after the Application was deleted (err %v)", err)
			}
			if cm, err := o.configMap(t, dest, "keep-me"); err != nil || cm.DeletionTimestamp != nil {
				t.Errorf("the Delete=false ConfigMap was deleted (err %v)", err)
			}
		})
	}
}

// TestDeletionWithoutFinalizerKeepsObjects: without a resources finalizer,
// deleting the Application leaves its objects.
func TestDeletionWithoutFinalizerKeepsObjects(t *testing.T) {
	o := startOperator(t, nil)
	dest := cluster.TestNamespace(t)
	repo := repoDir(t, map[string]string{"app/web.yaml": webManifests})
	o.create(t, newApp(o.ns, appSpec{name: "orphan", repo: repo, dest: dest, automated: true}))
	o.waitApp(t, "orphan", "Synced and Healthy", syncedHealthy)
	o.delete(t, "orphan")
	o.waitGone(t, "orphan")
	cm, err := o.configMap(t, dest, "settings")
	if err != nil || cm.DeletionTimestamp != nil {
		t.Errorf("ConfigMap: %v (deleting: %v)", err, err == nil && cm.DeletionTimestamp != nil)
	}
	if d, err := o.deployment(t, dest, "web"); err != nil || d.DeletionTimestamp != nil {
		t.Errorf("Deployment deleted or missing: %v", err)
	}
}

// TestBadApplicationsAreReported: a spec the engine refuses and a
// destination it does not know are conditions on the status, not silence.
func TestBadApplicationsAreReported(t *testing.T) {
	o := startOperator(t, nil)
	repo := repoDir(t, map[string]string{"app/web.yaml": webManifests})

	both := newApp(o.ns, appSpec{name: "both", repo: repo, dest: "default"})
	both.Spec.Sources = []v1alpha1.ApplicationSource{{RepoURL: repo, Path: "app"}}
	o.create(t, both)
	got := o.waitApp(t, "both", "InvalidSpecError", func(a observed) bool { return len(a.Status.Conditions) > 0 })
	if c := got.Status.Conditions[0]; c.Type != "InvalidSpecError" || !strings.Contains(c.Message, "spec.sources") || got.Status.Sync.Status != "Unknown" {
		t.Errorf("status: %s", got)
	}

	elsewhere := newApp(o.ns, appSpec{name: "elsewhere", repo: repo, dest: "default"})
	elsewhere.Spec.Destination = v1alpha1.ApplicationDestination{Server: "https://elsewhere.example", Namespace: "default"}
	o.create(t, elsewhere)
	got = o.waitApp(t, "elsewhere", "ComparisonError", func(a observed) bool { return len(a.Status.Conditions) > 0 })
	if c := got.Status.Conditions[0]; c.Type != "ComparisonError" || !strings.Contains(c.Message, "elsewhere.example") || got.Status.Sync.Status != "Unknown" {
		t.Errorf("status: %s", got)
	}
}

// TestCRDRefusesFieldsTheEngineLacks: the schema is the engine's subset
// (generated from the model's Go types), so with strict field validation
// a field the model has no place for is refused, naming it; without it,
// the API server prunes the field, and the controller never sees it.
// (Every Argo CD v3.6 source field has a place now: the field is made up.)
func TestCRDRefusesFieldsTheEngineLacks(t *testing.T) {
	c := newClient(t)
	ns := cluster.TestNamespace(t)
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(newApp(ns, appSpec{name: "unknownfield", repo: "/repo", dest: "default"}))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.ApplicationKind))
	u.Object["spec"].(map[string]any)["source"].(map[string]any)["notAnArgoField"] = "v"

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = c.Create(ctx, u.DeepCopy(), &client.CreateOptions{FieldValidation: metav1.FieldValidationStrict})
	if err == nil || !strings.Contains(err.Error(), "notAnArgoField") {
		t.Fatalf("create with an unknown field: err = %v", err)
	}
	if err := c.Create(ctx, u.DeepCopy(), &client.CreateOptions{FieldValidation: metav1.FieldValidationIgnore}); err != nil {
		t.Fatal(err)
	}
	got := u.DeepCopy()
	if err := c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(got.Object, "spec", "source", "notAnArgoField"); found {
		t.Error("the API server kept a field the schema does not know")
	}
}

func (o *operator) delete(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := o.c.Delete(ctx, ref(o.ns, name)); err != nil {
		t.Fatalf("delete %s: %v", name, err)
	}
}
