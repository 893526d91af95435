package main

import (
	"context"
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
	"github.com/kubegitops/gitops/examples/operator/config"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/testenv"
)

// userGuideWorld is an Argo CD namespace served by the operator on a
// cluster of its own, with local copies of the repositories, chart
// repositories and registries the user guide's pages name.
type userGuideWorld struct {
	ctx  context.Context
	c    client.Client
	full *testenv.Cluster
	ns   string // the operator's namespace: Argo CD's argocd
	gs   *gitserver.Server
	// urls maps each URL a page names to its local copy.
	urls map[string]string
}

// startUserGuideWorld starts the world's cluster (the controllers and a
// kwok node: Deployments roll out) and its Git server with the local
// copies of the repositories the pages' apps name, and returns it with
// the commit of billing-app's tag 8.5.1.
func startUserGuideWorld(t *testing.T) (*userGuideWorld, string) {
	t.Helper()
	ctx := context.Background()
	full, err := testenv.Start(ctx, testenv.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = full.Stop() })
	w := &userGuideWorld{ctx: ctx, c: newArgoClient(t, full.Config()), full: full, ns: "argocd"}
	c := w.c
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
	// The source hydrator pushes to argocd-example-apps: pushes are
	// allowed with the repository-write Secret's credentials.
	gopts := gitserver.DefaultOptions()
	gopts.PushUsername, gopts.PushPassword = "hydrator", "write-secret"
	gs, _ := testfiles.GitRepo(t, gopts, "argocd-example-apps", fstest.MapFS{
		"guestbook/guestbook-ui-svc.yaml":                  {Data: svc("guestbook-ui")},
		"guestbook/guestbook-ui-cm.yaml":                   {Data: cm("guestbook-ui")},
		"kustomize-guestbook/kustomization.yaml":           {Data: []byte("namePrefix: kustomize-\nresources:\n  - guestbook-ui-deployment.yaml\n  - guestbook-ui-svc.yaml\n")},
		"kustomize-guestbook/guestbook-ui-deployment.yaml": {Data: []byte(deploy)},
		"kustomize-guestbook/guestbook-ui-svc.yaml":        {Data: svc("guestbook-ui")},
		"helm-guestbook/Chart.yaml":                        {Data: []byte("apiVersion: v2\nname: helm-guestbook\nversion: 0.1.0\n")},
		"helm-guestbook/values.yaml":                       {Data: []byte("greeting: hello\n")},
		"helm-guestbook/templates/cm.yaml":                 {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{ .Release.Name }}-helm-guestbook'}\ndata: {greeting: '{{ .Values.greeting }}'}\n")},
	})
	w.gs = gs
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
	w.urls = map[string]string{
		"https://github.com/argoproj/argocd-example-apps.git": gs.RepoURL("argocd-example-apps"),
		"https://github.com/argoproj/argocd-example-apps":     gs.RepoURL("argocd-example-apps"),
		"https://github.com/kubernetes-sigs/kustomize":        gs.RepoURL("kustomize"),
		"https://github.com/mycompany/billing-app.git":        gs.RepoURL("billing-app"),
		"https://github.com/mycompany/common-settings.git":    gs.RepoURL("common-settings"),
	}

	// The pages' destination namespaces, as their reader has them (demo
	// is made by the app's CreateNamespace), and the operator's.
	for _, name := range []string{w.ns, "test1", "guestbook", "kubeseal", "nginx", "my-namespace"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	return w, billingTag
}

// startOperator installs the operator's CRDs, gives the pages' projects
// the state their reader has (Argo CD's default project as it is
// installed, and my-project allowing everything), does what the source
// hydrator's page asks first, and runs the operator on the world's
// namespace.
func (w *userGuideWorld) startOperator(t *testing.T) {
	t.Helper()
	// kubectl apply -f examples/operator/config/
	if err := config.Install(w.ctx, w.c, time.Minute); err != nil {
		t.Fatal(err)
	}
	w.resetProject(t, "default")
	w.resetProject(t, "my-project")
	hydratorSetup(t, w)
	runOperator(t, "-kubeconfig", w.full.Kubeconfig(), "-namespace", w.ns, "-interval", "10s", "-hydrator-interval", "1s",
		"-metrics-bind-address", "0", "-health-probe-bind-address", "0")
}

// localCopy returns o in the operator's namespace with every string
// naming a URL of w.urls replaced by its local copy; a repoURL without a
// local copy fails the test.
func (w *userGuideWorld) localCopy(t *testing.T, o *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	out := o.DeepCopy()
	out.SetNamespace(w.ns)
	var walk func(key string, v any) any
	walk = func(key string, v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(k, e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(key, e)
			}
		case string:
			if to, ok := w.urls[x]; ok {
				return to
			}
			if key == "repoURL" {
				t.Fatalf("%s %s: repoURL %s has no local copy", o.GetKind(), o.GetName(), x)
			}
		}
		return v
	}
	out.Object["spec"] = walk("spec", out.Object["spec"])
	return out
}

// apply creates the page's object (its local copy) with op as the
// Application's operation (nil: none) and returns its key.
func (w *userGuideWorld) apply(t *testing.T, o *unstructured.Unstructured, op map[string]any) types.NamespacedName {
	t.Helper()
	obj := w.localCopy(t, o)
	if op != nil {
		obj.Object["operation"] = op
	}
	var err error
	waitUntil(t, func() string { return fmt.Sprintf("create %s %s: %v", obj.GetKind(), obj.GetName(), err) }, func(ctx context.Context) bool {
		err = w.c.Create(ctx, obj.DeepCopy())
		return err == nil
	})
	return client.ObjectKeyFromObject(obj)
}

// manualSync is the operation `argocd app sync` sets.
func manualSync() map[string]any {
	return map[string]any{"sync": map[string]any{}, "initiatedBy": map[string]any{"username": "tester"}}
}

// syncApp applies the page's app with a sync operation and waits until
// it is Synced and health after a Succeeded operation.
func (w *userGuideWorld) syncApp(t *testing.T, key string, o *unstructured.Unstructured, health string) *v1alpha1.Application {
	t.Helper()
	name := w.apply(t, o, manualSync())
	return w.waitApp(t, name.Name, fmt.Sprintf("%s: Synced and %s after its sync", key, health), func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == "Synced" && a.Status.Health.Status == health &&
			a.Status.OperationState != nil && a.Status.OperationState.Phase == "Succeeded"
	})
}

// waitApp polls Application name of the operator's namespace until cond
// holds.
func (w *userGuideWorld) waitApp(t *testing.T, name, what string, cond func(*v1alpha1.Application) bool) *v1alpha1.Application {
	t.Helper()
	got := &v1alpha1.Application{}
	waitUntil(t, func() string {
		op := "none"
		if s := got.Status.OperationState; s != nil {
			op = fmt.Sprintf("%s %q", s.Phase, s.Message)
		}
		return fmt.Sprintf("%s: %s; operation %s; status %+v", name, what, op, got.Status)
	}, func(ctx context.Context) bool {
		return w.c.Get(ctx, types.NamespacedName{Namespace: w.ns, Name: name}, got) == nil && cond(got)
	})
	return got
}

// deleteApp deletes Application name (without a finalizer: its resources
// stay, as in Argo CD) and waits until it is gone, as the next page may
// reuse its name.
func (w *userGuideWorld) deleteApp(t *testing.T, name string) {
	t.Helper()
	key := types.NamespacedName{Namespace: w.ns, Name: name}
	if err := w.c.Delete(w.ctx, &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name}}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	waitUntil(t, func() string { return name + " deleted" }, func(ctx context.Context) bool {
		return apierrors.IsNotFound(w.c.Get(ctx, key, &v1alpha1.Application{}))
	})
}

// requestSync sets a manual sync operation on Application name.
func (w *userGuideWorld) requestSync(t *testing.T, name string) {
	t.Helper()
	waitUntil(t, func() string { return "ask for a sync of " + name }, func(ctx context.Context) bool {
		a := &v1alpha1.Application{}
		if w.c.Get(ctx, types.NamespacedName{Namespace: w.ns, Name: name}, a) != nil {
			return false
		}
		a.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "tester"}}
		return w.c.Update(ctx, a) == nil
	})
}
