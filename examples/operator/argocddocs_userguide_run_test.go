package main

import (
	"context"
	"fmt"
	"sort"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/internal/argodocs"
)

// userGuideStoredOnly are the whole manifests of docs/user-guide that
// TestArgoCDUserGuideManifestsRun does not run (TestArgoCDUserGuideManifestsStoredWhole
// loads and stores every one), and why. Every one runs today.
var userGuideStoredOnly = map[string]string{}

// userGuideRun is what a run user-guide manifest must do, as its page
// says. An Application without run is applied with a manual sync
// (argocd app sync) and must reach Synced, health and check; run, when
// set, applies and checks the manifest itself (ApplicationSets,
// AppProjects, apps whose page implies another outcome).
type userGuideRun struct {
	health string // the app's health; "" when the page implies no reconcile at all
	check  func(t *testing.T, c client.Client, app *v1alpha1.Application)
	run    func(t *testing.T, w *userGuideWorld, key string, o *unstructured.Unstructured)
	// project marks the AppProjects: they run last, one at a time, as
	// they change the projects the other pages' apps use.
	project bool
}

// TestArgoCDUserGuideManifestsRun applies each whole manifest of the
// release's docs/user-guide pages under the operator, as it is but for
// its URLs (each mapped to a local copy holding content equivalent to
// what the page names: Git repositories on the local Git server, Helm
// charts in a Helm repository over HTTP and in an OCI registry, OCI
// artifacts), and checks what the page says it does: the directory app,
// the Kustomize apps (inline patch, commonAnnotations with envsubst,
// CreateNamespace; their Deployments roll out and are Healthy on this
// cluster, which runs the controllers and a kwok node), the two-source
// app, the skip-reconcile app (no status at all, until its annotation is
// set to "false"), the Helm and OCI apps (userGuideChartRuns), the
// ApplicationSets (userGuideSetRuns), the source hydrator
// (userGuideHydratorRuns) and the AppProjects (userGuideProjectRuns).
func TestArgoCDUserGuideManifestsRun(t *testing.T) {
	rel := argodocs.ForTest(t)
	manifests := userGuideManifests(t, rel)
	w, billingTag := startUserGuideWorld(t)
	runs := userGuideAppRuns(w, billingTag)
	for _, more := range []map[string]userGuideRun{userGuideChartRuns(t, w), userGuideSetRuns(t, w), userGuideHydratorRuns(t, w), userGuideProjectRuns(t, w)} {
		for k, v := range more {
			runs[k] = v
		}
	}
	keys := make([]string, 0, len(manifests))
	for k := range manifests {
		keys = append(keys, k)
		_, run := runs[k]
		_, stored := userGuideStoredOnly[k]
		if run == stored {
			t.Errorf("%s (%s %s): run %v, stored only %v: name it in exactly one", k, manifests[k].GetKind(), manifests[k].GetName(), run, stored)
		}
	}
	sort.Strings(keys)
	for k := range runs {
		if manifests[k] == nil {
			t.Fatalf("%s: no such whole manifest in %s", k, rel.Version())
		}
	}
	w.startOperator(t)

	// The skip-reconcile app first (it shares its name with the directory
	// app): once every other app has synced, it still has no status. The
	// projects last: they change the projects the other apps use.
	const skipKey, dirKey = "docs/user-guide/skip_reconcile.md#1", "docs/user-guide/directory.md#1"
	skip := w.apply(t, manifests[skipKey], nil)
	for _, k := range keys {
		if want := runs[k]; k != skipKey && k != dirKey && !want.project {
			w.run(t, k, manifests[k], want)
		}
	}
	got := &v1alpha1.Application{}
	if err := w.c.Get(w.ctx, skip, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Sync.Status != "" || got.Status.Health.Status != "" || got.Status.ReconciledAt != nil {
		t.Errorf("skip-reconcile app has a status: %+v", got.Status)
	}
	// Set to "false", as the page says, the app is reconciled again: it
	// gets a status (OutOfSync: it has no sync policy).
	if err := w.c.Patch(w.ctx, got, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"argocd.argoproj.io/skip-reconcile":"false"}}}`))); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() string { return fmt.Sprintf("skip-reconcile app resumed; status %+v", got.Status) }, func(ctx context.Context) bool {
		return w.c.Get(ctx, skip, got) == nil && got.Status.Sync.Status == "OutOfSync"
	})
	w.deleteApp(t, skip.Name)
	w.run(t, dirKey, manifests[dirKey], runs[dirKey])
	for _, k := range keys {
		if want := runs[k]; want.project {
			w.run(t, k, manifests[k], want)
		}
	}
}

// run applies the page's manifest and checks it as want says.
func (w *userGuideWorld) run(t *testing.T, key string, o *unstructured.Unstructured, want userGuideRun) {
	t.Helper()
	t.Logf("running %s (%s %s)", key, o.GetKind(), o.GetName())
	if want.run != nil {
		want.run(t, w, key, o)
		return
	}
	app := w.syncApp(t, key, o, want.health)
	want.check(t, w.c, app)
	w.deleteApp(t, app.Name)
}

// userGuideAppRuns are the pages' Applications run from Git: the
// directory app, the Kustomize apps, the two-source app (billingTag is
// its tag's commit) and the skip-reconcile app.
func userGuideAppRuns(w *userGuideWorld, billingTag string) map[string]userGuideRun {
	ctx := w.ctx
	get := func(t *testing.T, c client.Client, o client.Object, ns, name string) {
		t.Helper()
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, o); err != nil {
			t.Errorf("%s/%s: %v", ns, name, err)
		}
	}
	return map[string]userGuideRun{
		"docs/user-guide/directory.md#1": {health: "Healthy", check: func(t *testing.T, c client.Client, app *v1alpha1.Application) {
			get(t, c, &corev1.Service{}, "default", "guestbook-ui")
		}},
		"docs/user-guide/kustomize.md#1": {health: "Healthy", check: func(t *testing.T, c client.Client, app *v1alpha1.Application) {
			m := &corev1.ConfigMap{}
			if get(t, c, m, "default", "the-map"); m.Labels["app"] != "hello" {
				t.Errorf("the-map labels %v, want the kustomization's app: hello", m.Labels)
			}
		}},
		"docs/user-guide/kustomize.md#2": {health: "Healthy", check: func(t *testing.T, c client.Client, app *v1alpha1.Application) {
			d := &appsv1.Deployment{}
			get(t, c, d, "test1", "kustomize-guestbook-ui")
			if ports := d.Spec.Template.Spec.Containers; len(ports) == 0 || len(ports[0].Ports) == 0 || ports[0].Ports[0].ContainerPort != 443 {
				t.Errorf("kustomize-guestbook-ui containers %+v, want the inline patch's containerPort 443", d.Spec.Template.Spec.Containers)
			}
			if d.Status.AvailableReplicas != 1 {
				t.Errorf("kustomize-guestbook-ui: %d available replicas, want 1", d.Status.AvailableReplicas)
			}
		}},
		"docs/user-guide/kustomize.md#4": {health: "Healthy", check: func(t *testing.T, c client.Client, app *v1alpha1.Application) {
			s := &corev1.Service{}
			if get(t, c, s, "demo", "kustomize-guestbook-ui"); s.Annotations["app-source"] != "guestbook-app" {
				t.Errorf("annotations %v, want app-source: guestbook-app (commonAnnotationsEnvsubst)", s.Annotations)
			}
		}},
		"docs/user-guide/multiple_sources.md#1": {health: "Healthy", check: func(t *testing.T, c client.Client, app *v1alpha1.Application) {
			get(t, c, &corev1.ConfigMap{}, "default", "billing-app") // at 8.5.1, not the later commit
			get(t, c, &corev1.ConfigMap{}, "default", "billing-common-settings")
			if revs := app.Status.Sync.Revisions; len(revs) != 2 || revs[0] != billingTag {
				t.Errorf("revisions %v, want the tag 8.5.1's commit %s and HEAD's", revs, billingTag)
			}
		}},
		"docs/user-guide/skip_reconcile.md#1": {},
	}
}
