package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// userGuideSetRuns runs the pages' ApplicationSets through the
// operator's ApplicationSet controller: the list generator's three
// clusters (their URLs mapped to this cluster's API server, declared by a
// cluster Secret) and the clusters generator over the clusters Argo CD
// knows (here the in-cluster one) with a Kustomize patch templated from
// the cluster's name.
func userGuideSetRuns(t *testing.T, w *userGuideWorld) map[string]userGuideRun {
	t.Helper()
	ctx := w.ctx
	cm := func(name string) []byte {
		return []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\ndata: {a: b}\n")
	}
	deployment := `apiVersion: apps/v1
kind: Deployment
metadata: {name: external-dns}
spec:
  replicas: 1
  selector: {matchLabels: {app: external-dns}}
  template:
    metadata: {labels: {app: external-dns}}
    spec:
      serviceAccountName: external-dns
      containers:
      - name: external-dns
        image: registry.k8s.io/external-dns/external-dns:v0.14.0
        args: [--source=service, --source=ingress, --registry=txt]
`
	repos := map[string]fstest.MapFS{
		"cluster-deployments": {
			"guestbook/engineering-dev/cm.yaml":  {Data: cm("engineering-dev-guestbook")},
			"guestbook/engineering-prod/cm.yaml": {Data: cm("engineering-prod-guestbook")},
			"guestbook/finance-preprod/cm.yaml":  {Data: cm("finance-preprod-guestbook")},
		},
		// external-dns' kustomize folder at v0.14.0: its Deployment's
		// container has three args before the one the patch adds.
		"external-dns": {
			"kustomize/kustomization.yaml":               {Data: []byte("resources:\n  - external-dns-serviceaccount.yaml\n  - external-dns-deployment.yaml\n")},
			"kustomize/external-dns-serviceaccount.yaml": {Data: []byte("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: external-dns}\n")},
			"kustomize/external-dns-deployment.yaml":     {Data: []byte(deployment)},
		},
	}
	for name, files := range repos {
		if _, err := w.gs.CreateRepository(ctx, name, files); err != nil {
			t.Fatal(err)
		}
	}
	tip, err := w.gs.Head(ctx, "external-dns")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.gs.Git(ctx, "external-dns", "tag", "v0.14.0", tip); err != nil {
		t.Fatal(err)
	}
	server := w.full.Config().Host
	for k, v := range map[string]string{
		"https://github.com/infra-team/cluster-deployments.git": w.gs.RepoURL("cluster-deployments"),
		"https://github.com/kubernetes-sigs/external-dns/":      w.gs.RepoURL("external-dns"),
		"https://1.2.3.4": server,
		"https://2.4.6.8": server,
		"https://9.8.7.6": server,
	} {
		w.urls[k] = v
	}
	return map[string]userGuideRun{
		"docs/user-guide/application-set.md#1": {run: func(t *testing.T, w *userGuideWorld, key string, o *unstructured.Unstructured) {
			secret := clusterSecret(w.ns, "engineering", "engineering", w.full.Config())
			if err := w.c.Create(ctx, secret); err != nil {
				t.Fatal(err)
			}
			set := w.apply(t, o, nil)
			// One Application per element, named as the template says,
			// each synced (argocd app sync) to its cluster.
			for _, cluster := range []string{"engineering-dev", "engineering-prod", "finance-preprod"} {
				name := cluster + "-guestbook"
				app := w.waitApp(t, name, key+": generated", func(*v1alpha1.Application) bool { return true })
				src := app.Spec.Source
				if app.Spec.Project != "my-project" || src == nil || src.Path != "guestbook/"+cluster || app.Spec.Destination.Server != server || app.Spec.Destination.Namespace != "guestbook" {
					t.Errorf("%s: spec %+v, want the template's for %s", name, app.Spec, cluster)
				}
				w.requestSync(t, name)
				w.waitApp(t, name, "Synced and Healthy after its sync", syncedHealthyAt(""))
				if err := w.c.Get(ctx, types.NamespacedName{Namespace: "guestbook", Name: name}, &corev1.ConfigMap{}); err != nil {
					t.Errorf("%s's ConfigMap: %v", name, err)
				}
			}
			w.deleteSet(t, set.Name, "engineering-dev-guestbook", "engineering-prod-guestbook", "finance-preprod-guestbook")
			if err := w.c.Delete(ctx, secret); err != nil {
				t.Fatal(err)
			}
		}},
		"docs/user-guide/kustomize.md#3": {run: func(t *testing.T, w *userGuideWorld, key string, o *unstructured.Unstructured) {
			set := w.apply(t, o, nil)
			app := w.waitApp(t, "external-dns", key+": generated for the in-cluster cluster", func(*v1alpha1.Application) bool { return true })
			if app.Spec.Destination.Name != "in-cluster" || app.Spec.Source == nil || app.Spec.Source.TargetRevision != "v0.14.0" {
				t.Errorf("external-dns: spec %+v, want the template's", app.Spec)
			}
			w.requestSync(t, "external-dns")
			w.waitApp(t, "external-dns", "Synced and Healthy after its sync", syncedHealthyAt(""))
			d := &appsv1.Deployment{}
			if err := w.c.Get(ctx, types.NamespacedName{Namespace: "default", Name: "external-dns"}, d); err != nil {
				t.Fatal(err)
			}
			want := []string{"--source=service", "--source=ingress", "--registry=txt", "--txt-owner-id=in-cluster"}
			if got := d.Spec.Template.Spec.Containers[0].Args; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("external-dns args %v, want %v (the patch templated with the cluster's name)", got, want)
			}
			// A declarative cluster Secret adds a second cluster: the
			// template's fixed name then names two Applications. As
			// Argo CD's controller ("contains applications with duplicate
			// name"), the set reports the error and the app it has stays.
			secret := clusterSecret(w.ns, "second-cluster", "second", w.full.Config())
			if err := w.c.Create(ctx, secret); err != nil {
				t.Fatal(err)
			}
			got := &v1alpha1.ApplicationSet{}
			waitUntil(t, func() string {
				return fmt.Sprintf("external-dns: the duplicate name reported; conditions %+v", got.Status.Conditions)
			}, func(ctx context.Context) bool {
				if w.c.Get(ctx, set, got) != nil {
					return false
				}
				for _, c := range got.Status.Conditions {
					if c.Type == "ErrorOccurred" && c.Status == "True" && strings.Contains(c.Message, "duplicate") {
						return true
					}
				}
				return false
			})
			if a := w.waitApp(t, "external-dns", "kept", func(*v1alpha1.Application) bool { return true }); a.Spec.Destination.Name != "in-cluster" {
				t.Errorf("external-dns destination %+v after the duplicate, want in-cluster kept", a.Spec.Destination)
			}
			w.deleteSet(t, set.Name, "external-dns")
			if err := w.c.Delete(ctx, secret); err != nil {
				t.Fatal(err)
			}
		}},
	}
}

// deleteSet deletes ApplicationSet name and waits until it and the apps
// it generated are gone.
func (w *userGuideWorld) deleteSet(t *testing.T, name string, apps ...string) {
	t.Helper()
	set := &v1alpha1.ApplicationSet{}
	set.Namespace, set.Name = w.ns, name
	if err := w.c.Delete(w.ctx, set); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() string { return fmt.Sprintf("ApplicationSet %s and its apps %v deleted", name, apps) }, func(ctx context.Context) bool {
		if !apierrors.IsNotFound(w.c.Get(ctx, types.NamespacedName{Namespace: w.ns, Name: name}, &v1alpha1.ApplicationSet{})) {
			return false
		}
		for _, a := range apps {
			if !apierrors.IsNotFound(w.c.Get(ctx, types.NamespacedName{Namespace: w.ns, Name: a}, &v1alpha1.Application{})) {
				return false
			}
		}
		return true
	})
}
