package main

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// hydratorSetup is what source-hydrator.md asks of its reader before its
// Application: hydrator.enabled in argocd-cmd-params-cm, and a
// repository-write Secret with push access to argocd-example-apps (the
// local Git server accepts pushes with it).
func hydratorSetup(t *testing.T, w *userGuideWorld) {
	t.Helper()
	for _, o := range []*corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "argocd-cmd-params-cm"}, Data: map[string]string{"hydrator.enabled": "true"}}} {
		if err := w.c.Create(w.ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	write := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "argocd-example-apps-write", Labels: map[string]string{"argocd.argoproj.io/secret-type": "repository-write"}},
		StringData: map[string]string{"url": w.gs.RepoURL("argocd-example-apps"), "type": "git", "username": "hydrator", "password": "write-secret"},
	}
	if err := w.c.Create(w.ctx, write); err != nil {
		t.Fatal(err)
	}
}

// userGuideHydratorRuns runs source-hydrator.md's Application with
// hydrateTo: the dry source (argocd-example-apps' helm-guestbook chart)
// is hydrated and pushed to environments/dev-next only; the app does not
// sync it until something moves it to environments/dev, as the page
// says; then a sync deploys the hydrated commit.
func userGuideHydratorRuns(t *testing.T, w *userGuideWorld) map[string]userGuideRun {
	t.Helper()
	return map[string]userGuideRun{
		"docs/user-guide/source-hydrator.md#1": {run: func(t *testing.T, w *userGuideWorld, key string, o *unstructured.Unstructured) {
			ctx := w.ctx
			const repo = "argocd-example-apps"
			dry, err := w.gs.Head(ctx, repo)
			if err != nil {
				t.Fatal(err)
			}
			name := w.apply(t, o, nil).Name
			var hydrated string
			w.waitApp(t, name, key+": hydrated to environments/dev-next", func(a *v1alpha1.Application) bool {
				cur := a.Status.SourceHydrator.CurrentOperation
				if cur == nil || cur.Phase != v1alpha1.HydrateOperationPhaseHydrated || cur.DrySHA != dry {
					return false
				}
				hydrated = cur.HydratedSHA
				return true
			})
			if tip, err := w.gs.Git(ctx, repo, "rev-parse", "refs/heads/environments/dev-next"); err != nil || tip != hydrated {
				t.Fatalf("environments/dev-next at %s (%v), status says %s", tip, err, hydrated)
			}
			if manifest, err := w.gs.Git(ctx, repo, "show", hydrated+":helm-guestbook/manifest.yaml"); err != nil || !strings.Contains(manifest, "my-app-helm-guestbook") {
				t.Fatalf("hydrated helm-guestbook/manifest.yaml: %q, %v", manifest, err)
			}
			// environments/dev did not exist: as Argo CD's commit server
			// does, the hydrator made it with an empty orphan commit, on
			// which environments/dev-next's commit is made; the manifests
			// are not on environments/dev.
			if _, err := w.gs.Git(ctx, repo, "show", "refs/heads/environments/dev:helm-guestbook/manifest.yaml"); err == nil {
				t.Fatal("environments/dev holds the hydrated manifests: the hydrator pushed to the syncSource branch")
			}
			// Not synced while only the hydrateTo branch has it: a sync
			// asked now finds no environments/dev and fails.
			w.requestSync(t, name)
			w.waitApp(t, name, "the sync before the promotion failed", func(a *v1alpha1.Application) bool {
				op := a.Status.OperationState
				return a.Operation == nil && op != nil && (op.Phase == "Error" || op.Phase == "Failed") && a.Status.Sync.Status != "Synced"
			})
			if err := w.c.Get(ctx, types.NamespacedName{Namespace: "default", Name: "my-app-helm-guestbook"}, &corev1.ConfigMap{}); err == nil {
				t.Fatal("the hydrated manifests were deployed before they reached environments/dev")
			}
			// The promotion a CI job or a merged pull request makes.
			if _, err := w.gs.Git(ctx, repo, "branch", "-f", "environments/dev", hydrated); err != nil {
				t.Fatal(err)
			}
			w.requestSync(t, name)
			w.waitApp(t, name, "Synced at the hydrated commit once on environments/dev", func(a *v1alpha1.Application) bool {
				op := a.Status.OperationState
				return a.Status.Sync.Status == "Synced" && a.Status.Sync.Revision == hydrated && op != nil && op.Phase == "Succeeded"
			})
			cm := &corev1.ConfigMap{}
			if err := w.c.Get(ctx, types.NamespacedName{Namespace: "default", Name: "my-app-helm-guestbook"}, cm); err != nil || cm.Data["greeting"] != "hello" {
				t.Errorf("my-app-helm-guestbook: %v %v", cm.Data, err)
			}
			w.deleteApp(t, name)
		}},
	}
}
