package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/internal/reftools"
)

// TestKustomizeAndHelmVersionsUnderTheOperator: argocd-cm's
// kustomize.path.<name> registers the reference kustomize binary, and an
// app whose kustomize.version names it is built by that binary (with
// kustomize.buildOptions.<name>: the managed-by label only the binary
// adds) and synced; an app naming a version not registered gets Argo
// CD's "kustomize version v3.5.4 is not registered", until argocd-cm
// registers it on the running operator; helm.version v4 renders, v2 is
// refused with Argo CD's message, each only for the app concerned.
func TestKustomizeAndHelmVersionsUnderTheOperator(t *testing.T) {
	kbin := reftools.ForTest(t, reftools.Kustomize)
	ns := cluster.TestNamespace(t)
	ctx := context.Background()
	c := testClient(t)
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "argocd-cm"}, Data: map[string]string{
		"kustomize.path.v5.8.2":         kbin,
		"kustomize.buildOptions.v5.8.2": "--enable-managedby-label",
	}}); err != nil {
		t.Fatal(err)
	}
	repo := writeRepo(t, map[string]string{
		"kustomization.yaml": "resources:\n  - cm.yaml\n",
		"cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello}\ndata: {a: b}\n",
	})
	for name, body := range map[string]string{
		"chart/Chart.yaml":        "apiVersion: v2\nname: hello\nversion: 0.1.0\n",
		"chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: chart-hello}\ndata: {a: b}\n",
	} {
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runOperator(t, "-namespace", ns, "-metrics-bind-address", "0", "-health-probe-bind-address", "0")
	dests := map[string]string{}
	app := func(name string, src v1alpha1.ApplicationSource) types.NamespacedName {
		dests[name] = cluster.TestNamespace(t)
		src.RepoURL = "file://" + repo
		createApps(ctx, t, c, &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.ApplicationSpec{
			Project: "default", Source: &src,
			Destination: v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: dests[name]},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{SelfHeal: true}},
		}})
		return types.NamespacedName{Namespace: ns, Name: name}
	}
	pinned := app("pinned", v1alpha1.ApplicationSource{Path: "app", Kustomize: &v1alpha1.ApplicationSourceKustomize{Version: "v5.8.2"}})
	unknown := app("unknown", v1alpha1.ApplicationSource{Path: "app", Kustomize: &v1alpha1.ApplicationSourceKustomize{Version: "v3.5.4"}})
	helm4 := app("helm4", v1alpha1.ApplicationSource{Path: "chart", Helm: &v1alpha1.ApplicationSourceHelm{Version: "v4"}})
	helm2 := app("helm2", v1alpha1.ApplicationSource{Path: "chart", Helm: &v1alpha1.ApplicationSourceHelm{Version: "v2"}})

	synced := func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == "Synced" && a.Status.Health.Status == "Healthy"
	}
	waitFor(t, c, pinned, "Synced and Healthy", synced)
	live := &corev1.ConfigMap{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: dests["pinned"], Name: "hello"}, live); err != nil {
		t.Fatal(err)
	}
	if got := live.Labels["app.kubernetes.io/managed-by"]; got != "kustomize-v5.8.2" {
		t.Errorf("managed-by label %q, want kustomize-v5.8.2: the app was not built by the registered binary", got)
	}
	waitFor(t, c, unknown, "refused naming its version", func(a *v1alpha1.Application) bool {
		return hasCondition(a, "ComparisonError", "kustomize version v3.5.4 is not registered")
	})
	waitFor(t, c, helm4, "Synced and Healthy", synced)
	waitFor(t, c, helm2, "refused with Argo CD's message", func(a *v1alpha1.Application) bool {
		return hasCondition(a, "InvalidSpecError", "helm version 'v2' is not supported")
	})

	// Registered on the running operator, the version builds the app.
	updateCM(ctx, t, c, ns, "argocd-cm", func(d map[string]string) { d["kustomize.path.v3.5.4"] = kbin })
	waitFor(t, c, unknown, "Synced and Healthy once registered", func(a *v1alpha1.Application) bool {
		return synced(a) && !hasCondition(a, "ComparisonError", "not registered")
	})
}
