package appsets_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/examples/operator/appsets"
)

// TestListSetCreatesSyncedApps: a list-generator set creates one
// Application per element in its namespace, controlled by the set, with
// the templated name, labels and source path; the Application reconciler
// of the same manager brings them to Synced and Healthy and the set's
// status reports them. An Application of a generated name the set does
// not own is left alone and reported. A template change updates the
// Applications but for the fields ignoreApplicationDifferences names.
func TestListSetCreatesSyncedApps(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	url := e.repo(t, "envs", map[string]string{"apps/one/cm.yaml": configMap("one"), "apps/two/cm.yaml": configMap("two")})
	dest := cluster.TestNamespace(t)

	// Someone's Application, named as the set would name its prod app.
	mine := &v1alpha1.Application{}
	mine.Name, mine.Namespace = "guestbook-prod", e.ns
	mine.Spec = v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: url, Path: "apps/one"},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "elsewhere"}}
	if err := e.c.Create(context.Background(), mine); err != nil {
		t.Fatal(err)
	}

	set := e.createSet(t, fmt.Sprintf(`
metadata: {name: guestbook}
spec:
  generators:
  - list:
      elements:
      - {env: dev, folder: apps/one}
      - {env: qa, folder: apps/two}
      - {env: prod, folder: apps/two}
  template:
    metadata:
      name: 'guestbook-{{env}}'
      labels: {env: '{{env}}'}
      finalizers: [resources-finalizer.argocd.argoproj.io]
    spec:
      project: default
      source: {repoURL: %s, targetRevision: main, path: '{{folder}}'}
      destination: {server: https://kubernetes.default.svc, namespace: %s}
      syncPolicy: {automated: {prune: true}}
  ignoreApplicationDifferences:
  - jsonPointers: [/spec/syncPolicy]
`, url, dest))
	e.waitSynced(t, "guestbook-dev", "guestbook-qa")
	for env, folder := range map[string]string{"dev": "apps/one", "qa": "apps/two"} {
		a := e.app(t, "guestbook-"+env)
		if !ownedBy(a, set) || a.Labels["env"] != env || a.Spec.Source.Path != folder || a.Spec.Destination.Namespace != dest ||
			a.Spec.SyncPolicy == nil || a.Spec.SyncPolicy.Automated == nil || len(a.Finalizers) != 1 {
			t.Fatalf("guestbook-%s as generated: owner %v, labels %v, spec %+v, finalizers %v", env, a.OwnerReferences, a.Labels, a.Spec, a.Finalizers)
		}
	}
	if !e.configMapExists(t, dest, "one") || !e.configMapExists(t, dest, "two") {
		t.Fatal("the generated apps' ConfigMaps are missing")
	}
	eventually(t, "the set's status", func() (bool, string) {
		s := e.set(t, "guestbook")
		errc, _ := condition(s, appsets.ConditionErrorOccurred)
		gen, _ := condition(s, appsets.ConditionParametersGenerated)
		upd, _ := condition(s, appsets.ConditionResourcesUpToDate)
		synced := 0
		for _, r := range s.Status.Resources {
			if r.Kind == "Application" && r.Status == "Synced" && r.Health != nil && r.Health.Status == "Healthy" {
				synced++
			}
		}
		ok := errc.Status == "True" && errc.Reason == appsets.ReasonCreateApplicationError &&
			strings.Contains(errc.Message, `application "guestbook-prod"`) && strings.Contains(errc.Message, appsets.ErrNotOwned.Error()) &&
			strings.Contains(errc.Message, e.ns+"/guestbook") &&
			gen.Status == "True" && upd.Status == "False" && synced == 2 && s.Status.ResourcesCount == 2
		return ok, fmt.Sprintf("%+v", s.Status)
	})
	if a := e.app(t, "guestbook-prod"); len(a.OwnerReferences) != 0 || a.Spec.Destination.Namespace != "elsewhere" || a.Labels != nil {
		t.Fatalf("the Application the set does not own was changed: %+v %+v", a.ObjectMeta, a.Spec)
	}
	var notOwned *appsets.Error
	if !errors.As(fmt.Errorf("w: %w", &appsets.Error{Set: "ns/s", App: "a", Err: appsets.ErrNotOwned}), &notOwned) || !errors.Is(notOwned, appsets.ErrNotOwned) {
		t.Fatal("appsets.Error does not unwrap to ErrNotOwned")
	}

	// A person turns automation off on dev; the set's rule keeps that
	// field, while a template change (a new label) reaches every app.
	e.patch(t, &v1alpha1.Application{}, "guestbook-dev", `{"spec":{"syncPolicy":{"automated":null}}}`)
	e.patch(t, &v1alpha1.ApplicationSet{}, "guestbook", `{"spec":{"template":{"metadata":{"labels":{"env":"{{env}}","team":"web"}}}}}`)
	eventually(t, "the new label on both apps", func() (bool, string) {
		dev, qa := e.app(t, "guestbook-dev"), e.app(t, "guestbook-qa")
		return dev.Labels["team"] == "web" && qa.Labels["team"] == "web", fmt.Sprintf("%v %v", dev.Labels, qa.Labels)
	})
	if dev := e.app(t, "guestbook-dev"); dev.Spec.SyncPolicy != nil && dev.Spec.SyncPolicy.Automated != nil {
		t.Fatalf("ignoreApplicationDifferences: dev's syncPolicy was overwritten: %+v", dev.Spec.SyncPolicy)
	}
	if qa := e.app(t, "guestbook-qa"); qa.Spec.SyncPolicy == nil || qa.Spec.SyncPolicy.Automated == nil {
		t.Fatalf("qa lost its automated policy: %+v", qa.Spec.SyncPolicy)
	}
}
