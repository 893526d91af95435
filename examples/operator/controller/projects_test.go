package controller_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/examples/operator/controller"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// startProjectOperator runs an operator whose projects are the
// AppProjects of its namespace (as the operator's main does).
func startProjectOperator(t *testing.T) *operator {
	t.Helper()
	c := newClient(t)
	ns := cluster.TestNamespace(t)
	stop := runOperatorWith(t, c, ns, nil, nil, func(o *controller.Options) {
		o.Projects = &controller.Projects{Namespace: ns}
	})
	t.Cleanup(stop)
	return &operator{ns: ns, c: c}
}

// createProject creates an AppProject in the operator's namespace.
func (o *operator) createProject(t *testing.T, name string, spec map[string]any) {
	t.Helper()
	u := controller.NewAppProject()
	u.SetNamespace(o.ns)
	u.SetName(name)
	u.Object["spec"] = spec
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := o.c.Create(ctx, u); err != nil {
		t.Fatalf("create AppProject %s: %v", name, err)
	}
}

// condition returns the message of the app's condition of that type.
func condition(o observed, typ string) (string, bool) {
	for _, c := range o.Status.Conditions {
		if c.Type == typ {
			return c.Message, true
		}
	}
	return "", false
}

// projectApp is an automated app of project proj deploying ConfigMap cm
// to dest.
func projectApp(ns, name, proj, repo, dest string) *v1alpha1.Application {
	app := newApp(ns, appSpec{name: name, repo: repo, dest: dest, automated: true})
	app.Spec.Project = proj
	return app
}

// assertNoConfigMap fails when the app wrote its ConfigMap to ns.
func assertNoConfigMap(t *testing.T, kube kubernetes.Interface, ns string) {
	t.Helper()
	_, err := kube.CoreV1().ConfigMaps(ns).Get(context.Background(), "cm", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap cm in %s: want none written, got err=%v", ns, err)
	}
}

// TestAppProjects: with the AppProjects of its namespace as the engine's
// projects, an app of team-a syncs (and, with orphanedResources.warn, an
// unmanaged object in its namespace is Argo CD's OrphanedResourceWarning);
// an app of team-a whose destination team-a does not allow gets
// InvalidSpecError and writes nothing; an app naming a project that does
// not exist gets Argo CD's condition, writes nothing, and syncs once the
// project is created, without a restart; the app of a project setting
// signatureKeys, whose source (a local directory) has no signatures to
// verify, gets a ComparisonError naming source integrity and writes nothing.
func TestAppProjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := startProjectOperator(t)
	kube, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	repo := repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"})
	allowed, outside, late, signed := cluster.TestNamespace(t), cluster.TestNamespace(t), cluster.TestNamespace(t), cluster.TestNamespace(t)
	dest := func(ns string) []any { return []any{map[string]any{"server": inCluster, "namespace": ns}} }
	o.createProject(t, "team-a", map[string]any{"sourceRepos": []any{"*"}, "destinations": dest(allowed),
		"orphanedResources": map[string]any{"warn": true}})

	o.create(t, projectApp(o.ns, "ok", "team-a", repo, allowed))
	o.waitApp(t, "ok", "Synced", syncedHealthy)
	if _, err := kube.CoreV1().ConfigMaps(allowed).Get(ctx, "cm", metav1.GetOptions{}); err != nil {
		t.Fatalf("the app of team-a did not write its ConfigMap: %v", err)
	}
	createConfigMap(t, kube, allowed, "stray")
	o.patch(t, "ok", map[string]any{"metadata": map[string]any{"annotations": map[string]any{controller.AnnotationRefresh: "normal"}}})
	got := o.waitApp(t, "ok", "OrphanedResourceWarning", func(a observed) bool {
		_, ok := condition(a, string(appstatus.ConditionOrphanedResources))
		return ok && syncedHealthy(a)
	})
	if msg, _ := condition(got, string(appstatus.ConditionOrphanedResources)); !strings.Contains(msg, "stray") {
		t.Errorf("orphan warning %q does not name ConfigMap stray", msg)
	}

	o.create(t, projectApp(o.ns, "outside", "team-a", repo, outside))
	got = o.waitApp(t, "outside", "InvalidSpecError", func(a observed) bool {
		_, ok := condition(a, string(appstatus.ConditionInvalidSpec))
		return ok
	})
	if msg, _ := condition(got, string(appstatus.ConditionInvalidSpec)); !strings.Contains(msg, "do not match any of the allowed destinations in project 'team-a'") {
		t.Errorf("InvalidSpecError = %q, want team-a's destinations refusal", msg)
	}
	assertNoConfigMap(t, kube, outside)

	o.create(t, projectApp(o.ns, "late", "team-b", repo, late))
	got = o.waitApp(t, "late", "InvalidSpecError", func(a observed) bool {
		_, ok := condition(a, string(appstatus.ConditionInvalidSpec))
		return ok
	})
	if msg, _ := condition(got, string(appstatus.ConditionInvalidSpec)); msg != "Application referencing project team-b which does not exist" {
		t.Errorf("InvalidSpecError = %q, want Argo CD's message for a missing project", msg)
	}
	assertNoConfigMap(t, kube, late)
	o.createProject(t, "team-b", map[string]any{"sourceRepos": []any{"*"}, "destinations": dest(late)})
	got = o.waitApp(t, "late", "Synced once team-b exists", syncedHealthy)
	if _, ok := condition(got, string(appstatus.ConditionInvalidSpec)); ok {
		t.Errorf("the missing-project condition stayed after the project appeared: %s", got)
	}
	if _, err := kube.CoreV1().ConfigMaps(late).Get(ctx, "cm", metav1.GetOptions{}); err != nil {
		t.Fatalf("the app did not write its ConfigMap once its project exists: %v", err)
	}

	o.createProject(t, "team-c", map[string]any{"sourceRepos": []any{"*"}, "destinations": dest(signed),
		"signatureKeys": []any{map[string]any{"keyID": "4AEE18F83AFDEB23"}}})
	o.create(t, projectApp(o.ns, "signed", "team-c", repo, signed))
	got = o.waitApp(t, "signed", "ComparisonError", func(a observed) bool {
		_, ok := condition(a, string(appstatus.ConditionComparisonError))
		return ok
	})
	if msg, _ := condition(got, string(appstatus.ConditionComparisonError)); !strings.Contains(msg, "source integrity") || !strings.Contains(msg, "cannot be verified") {
		t.Errorf("ComparisonError = %q, want the source integrity refusal of a source whose signatures cannot be read", msg)
	}
	assertNoConfigMap(t, kube, signed)
}

// createConfigMap creates an unmanaged ConfigMap.
func createConfigMap(t *testing.T, kube kubernetes.Interface, ns, name string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ConfigMap %s/%s: %v", ns, name, err)
	}
}
