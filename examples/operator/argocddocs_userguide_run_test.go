package main

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"testing/fstest"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/internal/argodocs"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
)

// userGuideStoredOnly are the whole manifests of docs/user-guide that
// TestArgoCDUserGuideManifestsRun does not run (TestArgoCDUserGuideManifestsStoredWhole
// loads and stores every one), and why.
var userGuideStoredOnly = map[string]string{
	"docs/user-guide/application-set.md#1": "an ApplicationSet: its generators and templates are the appset suite's (TestArgoCDDocsManifestsOnCluster runs the reference set)",
	"docs/user-guide/kustomize.md#3":       "an ApplicationSet of the clusters generator over external-dns from GitHub: the appset suite's",
	"docs/user-guide/helm.md#1":            "a chart of https://bitnami.github.io/sealed-secrets, a Helm repository on the internet",
	"docs/user-guide/helm.md#2":            "a chart of registry-1.docker.io/bitnamicharts, an OCI registry on the internet",
	"docs/user-guide/oci.md#1":             "an OCI artifact of registry-1.docker.io, on the internet",
	"docs/user-guide/oci.md#2":             "an OCI chart of registry-1.docker.io, on the internet",
	"docs/user-guide/oci.md#3":             "an OCI source of registry-1.docker.io, on the internet",
	"docs/user-guide/source-hydrator.md#1": "the source hydrator pushes to its repository: TestHydrat* run it against the local Git server",
	"docs/user-guide/projects.md#1":        "an AppProject, not an app: TestArgoCDDocumentedProjectWorksWhole runs projects",
	"docs/user-guide/projects.md#2":        "an AppProject, not an app",
	"docs/user-guide/source-hydrator.md#2": "an AppProject, not an app",
	"docs/user-guide/sync_windows.md#1":    "an AppProject, not an app: sync windows are the project suite's",
}

// userGuideRun is what a run user-guide Application must reach after a
// manual sync (argocd app sync), as its page implies.
type userGuideRun struct {
	health string // the app's health; "" when the page implies no reconcile at all
	check  func(t *testing.T, c client.Client, app *v1alpha1.Application)
}

// TestArgoCDUserGuideManifestsRun applies each whole Application of the
// release's docs/user-guide pages that the operator can run here, as it
// is but for its repoURL (the local Git server, holding content
// equivalent to the repository the page names: argocd-example-apps'
// guestbook and kustomize-guestbook, kustomize's examples/helloWorld,
// the billing app at its tag 8.5.1 and the common settings), syncs it as
// `argocd app sync` does, and checks what the page says it does: the
// directory app, the Kustomize apps (inline patch, commonAnnotations with
// envsubst, CreateNamespace), the two-source app and the skip-reconcile
// app (no status at all, until its annotation is set to "false").
// userGuideStoredOnly names the others and why.
// The kustomize-guestbook Deployment stays Progressing: this package's
// cluster runs no controller-manager to roll it out.
func TestArgoCDUserGuideManifestsRun(t *testing.T) {
	rel := argodocs.ForTest(t)
	manifests := userGuideManifests(t, rel)
	ctx := context.Background()
	c := newArgoClient(t, cluster.Config())

	cm := func(name string) []byte {
		return []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\ndata: {a: b}\n")
	}
	svc := func(name string) []byte {
		return []byte("apiVersion: v1\nkind: Service\nmetadata: {name: " + name + "}\nspec: {ports: [{port: 80, targetPort: 80}], selector: {app: " + name + "}}\n")
	}
	const deploy = `apiVersion: apps/v1
kind: Deployment
metadata: {name: guestbook-ui}
spec:
  replicas: 1
  selector: {matchLabels: {app: guestbook-ui}}
  template:
    metadata: {labels: {app: guestbook-ui}}
    spec: {containers: [{name: guestbook-ui, image: gcr.io/heptio-images/ks-guestbook-demo:0.2, ports: [{containerPort: 80}]}]}
`
	gs, _ := testfiles.GitRepo(t, gitserver.DefaultOptions(), "argocd-example-apps", fstest.MapFS{
		"guestbook/guestbook-ui-svc.yaml":                  {Data: svc("guestbook-ui")},
		"guestbook/guestbook-ui-cm.yaml":                   {Data: cm("guestbook-ui")},
		"kustomize-guestbook/kustomization.yaml":           {Data: []byte("namePrefix: kustomize-\nresources:\n  - guestbook-ui-deployment.yaml\n  - guestbook-ui-svc.yaml\n")},
		"kustomize-guestbook/guestbook-ui-deployment.yaml": {Data: []byte(deploy)},
		"kustomize-guestbook/guestbook-ui-svc.yaml":        {Data: svc("guestbook-ui")},
	})
	repos := map[string]fstest.MapFS{
		"kustomize": {
			"examples/helloWorld/kustomization.yaml": {Data: []byte("labels:\n  - pairs: {app: hello}\n    includeSelectors: true\nresources:\n  - configMap.yaml\n  - service.yaml\n")},
			"examples/helloWorld/configMap.yaml":     {Data: cm("the-map")},
			"examples/helloWorld/service.yaml":       {Data: svc("the-service")},
		},
		"billing-app":     {"manifests/cm.yaml": {Data: cm("billing-app")}},
		"common-settings": {"configmaps-billing/cm.yaml": {Data: cm("billing-common-settings")}},
	}
	for _, name := range []string{"kustomize", "billing-app", "common-settings"} {
		if _, err := gs.CreateRepository(ctx, name, repos[name]); err != nil {
			t.Fatal(err)
		}
	}
	// The pages' revisions: argocd-example-apps' master, billing-app's tag.
	billingTag, err := gs.Head(ctx, "billing-app")
	if err != nil {
		t.Fatal(err)
	}
	for _, git := range [][]string{{"argocd-example-apps", "branch", "master", gs.Branch()}, {"billing-app", "tag", "8.5.1", billingTag}} {
		if _, err := gs.Git(ctx, git[0], git[1:]...); err != nil {
			t.Fatal(err)
		}
	}
	// billing-app moves on after its tag: the app must stay at 8.5.1.
	if _, err := gs.Commit(ctx, "billing-app", "after the release", map[string][]byte{"manifests/cm.yaml": cm("billing-app-next")}); err != nil {
		t.Fatal(err)
	}
	urls := map[string]string{
		"https://github.com/argoproj/argocd-example-apps.git": gs.RepoURL("argocd-example-apps"),
		"https://github.com/argoproj/argocd-example-apps":     gs.RepoURL("argocd-example-apps"),
		"https://github.com/kubernetes-sigs/kustomize":        gs.RepoURL("kustomize"),
		"https://github.com/mycompany/billing-app.git":        gs.RepoURL("billing-app"),
		"https://github.com/mycompany/common-settings.git":    gs.RepoURL("common-settings"),
	}

	// The pages' destination namespaces, as their reader has them (demo
	// is made by the app's CreateNamespace); what lands in default is
	// removed afterwards.
	for _, name := range []string{"test1", "guestbook"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, o := range []client.Object{
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "guestbook-ui"}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "guestbook-ui"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "the-map"}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "the-service"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "billing-app"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "billing-common-settings"}},
		} {
			_ = c.Delete(context.Background(), o)
		}
	})

	ns := cluster.TestNamespace(t)
	runOperator(t, "-namespace", ns, "-metrics-bind-address", "0", "-health-probe-bind-address", "0")

	get := func(t *testing.T, c client.Client, o client.Object, ns, name string) {
		t.Helper()
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, o); err != nil {
			t.Errorf("%s/%s: %v", ns, name, err)
		}
	}
	runs := map[string]userGuideRun{
		"docs/user-guide/directory.md#1": {health: "Healthy", check: func(t *testing.T, c client.Client, app *v1alpha1.Application) {
			get(t, c, &corev1.Service{}, "default", "guestbook-ui")
		}},
		"docs/user-guide/kustomize.md#1": {health: "Healthy", check: func(t *testing.T, c client.Client, app *v1alpha1.Application) {
			m := &corev1.ConfigMap{}
			if get(t, c, m, "default", "the-map"); m.Labels["app"] != "hello" {
				t.Errorf("the-map labels %v, want the kustomization's app: hello", m.Labels)
			}
		}},
		"docs/user-guide/kustomize.md#2": {health: "Progressing", check: func(t *testing.T, c client.Client, app *v1alpha1.Application) {
			d := &appsv1.Deployment{}
			get(t, c, d, "test1", "kustomize-guestbook-ui")
			if ports := d.Spec.Template.Spec.Containers; len(ports) == 0 || len(ports[0].Ports) == 0 || ports[0].Ports[0].ContainerPort != 443 {
				t.Errorf("kustomize-guestbook-ui containers %+v, want the inline patch's containerPort 443", d.Spec.Template.Spec.Containers)
			}
		}},
		"docs/user-guide/kustomize.md#4": {health: "Progressing", check: func(t *testing.T, c client.Client, app *v1alpha1.Application) {
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

	// The skip-reconcile app first (it shares its name with the directory
	// app): once every other app has synced, it still has no status.
	skip := applyUserGuideApp(ctx, t, c, ns, manifests["docs/user-guide/skip_reconcile.md#1"], urls, true)
	for _, k := range keys {
		want, ok := runs[k]
		if !ok || want.check == nil || k == "docs/user-guide/directory.md#1" {
			continue
		}
		userGuideSync(ctx, t, c, ns, k, manifests[k], urls, want)
	}
	got := &v1alpha1.Application{}
	if err := c.Get(ctx, skip, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Sync.Status != "" || got.Status.Health.Status != "" || got.Status.ReconciledAt != nil {
		t.Errorf("skip-reconcile app has a status: %+v", got.Status)
	}
	// Set to "false", as the page says, the app is reconciled again: it
	// gets a status (OutOfSync: it has no sync policy).
	if err := c.Patch(ctx, got, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"argocd.argoproj.io/skip-reconcile":"false"}}}`))); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() string { return fmt.Sprintf("skip-reconcile app resumed; status %+v", got.Status) }, func(ctx context.Context) bool {
		return c.Get(ctx, skip, got) == nil && got.Status.Sync.Status == "OutOfSync"
	})
	if err := c.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() string { return "skip-reconcile app deleted" }, func(ctx context.Context) bool {
		return apierrors.IsNotFound(c.Get(ctx, skip, &v1alpha1.Application{}))
	})
	k := "docs/user-guide/directory.md#1"
	userGuideSync(ctx, t, c, ns, k, manifests[k], urls, runs[k])
}

// applyUserGuideApp creates the page's Application in ns with its
// repoURLs rewritten, and, unless create only, returns its key.
func applyUserGuideApp(ctx context.Context, t *testing.T, c client.Client, ns string, o *unstructured.Unstructured, urls map[string]string, createOnly bool) types.NamespacedName {
	t.Helper()
	app := o.DeepCopy()
	app.SetNamespace(ns)
	rewrite := func(src map[string]any) {
		u, _ := src["repoURL"].(string)
		to, ok := urls[u]
		if !ok {
			t.Fatalf("%s: repoURL %s has no local repository", app.GetName(), u)
		}
		src["repoURL"] = to
	}
	spec, _ := app.Object["spec"].(map[string]any)
	if src, ok := spec["source"].(map[string]any); ok {
		rewrite(src)
	}
	srcs, _ := spec["sources"].([]any)
	for _, s := range srcs {
		rewrite(s.(map[string]any))
	}
	if !createOnly {
		// argocd app sync: a sync operation on the app.
		app.Object["operation"] = map[string]any{"sync": map[string]any{}, "initiatedBy": map[string]any{"username": "tester"}}
	}
	var err error
	waitUntil(t, func() string { return fmt.Sprintf("create %s: %v", app.GetName(), err) }, func(ctx context.Context) bool {
		err = c.Create(ctx, app.DeepCopy())
		return err == nil
	})
	return client.ObjectKeyFromObject(app)
}

// userGuideSync applies the page's app with a sync operation and waits
// for what the page implies.
func userGuideSync(ctx context.Context, t *testing.T, c client.Client, ns, key string, o *unstructured.Unstructured, urls map[string]string, want userGuideRun) {
	t.Helper()
	name := applyUserGuideApp(ctx, t, c, ns, o, urls, false)
	got := &v1alpha1.Application{}
	waitUntil(t, func() string {
		return fmt.Sprintf("%s (%s): not Synced and %s after its sync; status %+v", key, name.Name, want.health, got.Status)
	}, func(ctx context.Context) bool {
		return c.Get(ctx, name, got) == nil && got.Status.Sync.Status == "Synced" && got.Status.Health.Status == want.health &&
			got.Status.OperationState != nil && got.Status.OperationState.Phase == "Succeeded"
	})
	want.check(t, c, got)
}
