package main

import (
	"encoding/json"
	"fmt"
	"testing"
	"testing/fstest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// resetProject makes AppProject name of the operator's namespace what the
// pages' reader has before applying a page's project: for default,
// Argo CD's default project as it is installed (everything permitted);
// for any other, a project permitting everything too.
func (w *userGuideWorld) resetProject(t *testing.T, name string) {
	t.Helper()
	spec := v1alpha1.AppProjectSpec{
		SourceRepos:              []string{"*"},
		Destinations:             []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
		ClusterResourceWhitelist: []v1alpha1.ClusterResourceRestrictionItem{{Group: "*", Kind: "*"}},
	}
	p := &v1alpha1.AppProject{}
	key := types.NamespacedName{Namespace: w.ns, Name: name}
	err := w.c.Get(w.ctx, key, p)
	switch {
	case apierrors.IsNotFound(err):
		p = &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name}, Spec: spec}
		err = w.c.Create(w.ctx, p)
	case err == nil:
		p.Spec = spec
		err = w.c.Update(w.ctx, p)
	}
	if err != nil {
		t.Fatalf("reset project %s: %v", name, err)
	}
}

// applyProject applies the page's AppProject (its local copy) as
// `kubectl apply -f` does onto the project of that name the reader has:
// the fields the page sets replace the project's, the others stay.
func (w *userGuideWorld) applyProject(t *testing.T, o *unstructured.Unstructured) {
	t.Helper()
	obj := w.localCopy(t, o)
	patch, err := json.Marshal(map[string]any{"spec": obj.Object["spec"]})
	if err != nil {
		t.Fatal(err)
	}
	p := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: obj.GetName()}}
	if err := w.c.Patch(w.ctx, p, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("apply %s: %v", obj.GetName(), err)
	}
}

// projectApp creates Application name of project, reading path of Git
// repository repo (argocd-example-apps' guestbook by default) into
// namespace ns of the in-cluster cluster, with a manual sync.
func (w *userGuideWorld) projectApp(t *testing.T, name, project, repo, path, ns string) {
	t.Helper()
	if err := w.c.Create(w.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name}, Spec: v1alpha1.ApplicationSpec{
		Project:     project,
		Source:      &v1alpha1.ApplicationSource{RepoURL: w.gs.RepoURL(repo), Path: path},
		Destination: v1alpha1.ApplicationDestination{Server: v1alpha1.KubernetesInternalAPIServerAddr, Namespace: ns},
	}, Operation: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "tester"}}}
	if err := w.c.Create(w.ctx, app); err != nil {
		t.Fatal(err)
	}
}

// deployed reports whether ConfigMap name of ns exists.
func (w *userGuideWorld) deployed(ns, name string) bool {
	return w.c.Get(w.ctx, types.NamespacedName{Namespace: ns, Name: name}, &corev1.ConfigMap{}) == nil
}

// userGuideProjectRuns applies the pages' AppProjects, each onto the
// project of its name as the reader has it, and checks an app of each as
// the page says.
func userGuideProjectRuns(t *testing.T, w *userGuideWorld) map[string]userGuideRun {
	t.Helper()
	// The hydrated repository of source-hydrator.md's policy, its
	// commits unsigned.
	if _, err := w.gs.CreateRepository(w.ctx, "my-hydrated-repo", fstest.MapFS{
		"dev/cm.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hydrated}\ndata: {a: b}\n")},
	}); err != nil {
		t.Fatal(err)
	}
	w.urls["https://github.com/my-org/my-hydrated-repo.git"] = w.gs.RepoURL("my-hydrated-repo")
	return map[string]userGuideRun{
		// "To remove all permissions from the default project": after it,
		// an app of default is denied, with Argo CD's messages.
		"docs/user-guide/projects.md#1": {project: true, run: func(t *testing.T, w *userGuideWorld, key string, o *unstructured.Unstructured) {
			w.resetProject(t, "default")
			w.applyProject(t, o)
			w.projectApp(t, "guestbook-denied", "default", "argocd-example-apps", "guestbook", "ug-denied")
			repoMsg := fmt.Sprintf("application repo %s is not permitted in project 'default'", w.gs.RepoURL("argocd-example-apps"))
			destMsg := "application destination server 'https://kubernetes.default.svc' and namespace 'ug-denied' do not match any of the allowed destinations in project 'default'"
			w.waitApp(t, "guestbook-denied", key+": denied", func(a *v1alpha1.Application) bool {
				return hasCondition(a, "InvalidSpecError", repoMsg) && hasCondition(a, "InvalidSpecError", destMsg) && a.Status.Sync.Status != "Synced"
			})
			if w.deployed("ug-denied", "guestbook-ui") {
				t.Error("the denied app was deployed")
			}
			w.deleteApp(t, "guestbook-denied")
			w.resetProject(t, "default")
		}},
		// A project role: read-only access for my-oidc-group, which Argo
		// CD's API server enforces (examples/portal here). The project
		// stays usable: its apps sync.
		"docs/user-guide/projects.md#2": {project: true, run: func(t *testing.T, w *userGuideWorld, key string, o *unstructured.Unstructured) {
			w.resetProject(t, "my-project")
			w.applyProject(t, o)
			p := &v1alpha1.AppProject{}
			if err := w.c.Get(w.ctx, types.NamespacedName{Namespace: w.ns, Name: "my-project"}, p); err != nil || len(p.Spec.Roles) != 1 || p.Spec.Roles[0].Name != "read-only" {
				t.Fatalf("my-project roles %+v, %v", p.Spec.Roles, err)
			}
			w.projectApp(t, "guestbook-roles", "my-project", "argocd-example-apps", "guestbook", "ug-roles")
			w.waitApp(t, "guestbook-roles", key+": an app of the project with a role syncs", syncedHealthyAt(""))
			if !w.deployed("ug-roles", "guestbook-ui") {
				t.Error("guestbook-ui not deployed")
			}
			w.deleteApp(t, "guestbook-roles")
			w.resetProject(t, "my-project")
		}},
		// sourceIntegrity for the hydrated repository: its commits must
		// be signed by the commit server's key D56C4FCA57A46444, which
		// argocd-gpg-keys-cm does not hold here; an unsigned commit is
		// refused with Argo CD's condition. Other repositories of the
		// project are not concerned.
		"docs/user-guide/source-hydrator.md#2": {project: true, run: func(t *testing.T, w *userGuideWorld, key string, o *unstructured.Unstructured) {
			head, err := w.gs.Head(w.ctx, "my-hydrated-repo")
			if err != nil {
				t.Fatal(err)
			}
			w.resetProject(t, "my-project")
			w.applyProject(t, o)
			w.projectApp(t, "hydrated", "my-project", "my-hydrated-repo", "dev", "ug-hydrated")
			w.projectApp(t, "guestbook-unsigned-ok", "my-project", "argocd-example-apps", "guestbook", "ug-integrity")
			refused := fmt.Sprintf("GIT/GPG: Failed verifying revision %s", head)
			w.waitApp(t, "hydrated", key+": the unsigned commit refused", func(a *v1alpha1.Application) bool {
				return hasCondition(a, "ComparisonError", refused) && a.Status.Sync.Status != "Synced"
			})
			if w.deployed("ug-hydrated", "hydrated") {
				t.Error("the unverified commit was deployed")
			}
			w.waitApp(t, "guestbook-unsigned-ok", "a repository outside the policy syncs", syncedHealthyAt(""))
			w.deleteApp(t, "hydrated")
			w.deleteApp(t, "guestbook-unsigned-ok")
			w.resetProject(t, "my-project")
		}},
		// The page's windows on the default project: apps named *-prod
		// may sync by hand at any hour (manualSync of the 01:10 window);
		// any other app only while an allow window matching it is open,
		// here the one of every app from 09:00 to 17:00 UTC (the app's
		// destination is the in-cluster server by address, which the
		// 23:00 window's cluster names do not match; its namespace is not
		// the deny window's default).
		"docs/user-guide/sync_windows.md#1": {project: true, run: func(t *testing.T, w *userGuideWorld, key string, o *unstructured.Unstructured) {
			w.resetProject(t, "default")
			w.applyProject(t, o)
			w.projectApp(t, "guestbook-prod", "default", "argocd-example-apps", "guestbook", "ug-windows-prod")
			w.waitApp(t, "guestbook-prod", key+": a manual sync of a *-prod app passes", syncedHealthyAt(""))
			open := allowWindowOpen(t)
			w.projectApp(t, "guestbook-windowed", "default", "argocd-example-apps", "guestbook", "ug-windows")
			if open {
				w.waitApp(t, "guestbook-windowed", "synced inside the 09:00-17:00 UTC allow window", syncedHealthyAt(""))
			} else {
				// As Argo CD's controller: the requested sync stays
				// Running, blocked, until the window opens.
				w.waitApp(t, "guestbook-windowed", "the sync denied outside every allow window", func(a *v1alpha1.Application) bool {
					op := a.Status.OperationState
					return a.Operation != nil && op != nil && op.Phase == "Running" && op.Message == "Sync operation blocked by sync window" && a.Status.Sync.Status != "Synced"
				})
				if w.deployed("ug-windows", "guestbook-ui") {
					t.Error("the denied sync deployed guestbook-ui")
				}
			}
			w.deleteApp(t, "guestbook-prod")
			w.deleteApp(t, "guestbook-windowed")
			w.resetProject(t, "default")
		}},
	}
}

// allowWindowOpen reports whether sync_windows.md's allow window of every
// app (schedule "0 9 * * *", 8h, UTC) is open now. Within a minute of
// either end, it first waits for the end to pass, so that the answer
// holds while the test syncs.
func allowWindowOpen(t *testing.T) bool {
	t.Helper()
	now := time.Now().UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	for _, edge := range []time.Time{day.Add(9 * time.Hour), day.Add(17 * time.Hour)} {
		if d := edge.Sub(now); d > -time.Minute && d < time.Minute {
			t.Logf("waiting for the window's edge at %s to pass", edge.Format(time.Kitchen))
			<-time.After(d + time.Minute)
			now = time.Now().UTC()
		}
	}
	return now.Hour() >= 9 && now.Hour() < 17
}
