package appsets_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/examples/operator/appsets"
	"github.com/kubegitops/gitops/examples/operator/controller"
)

// TestSetForMissingProject: Argo CD's documented example set names
// project my-project. While no such AppProject exists, the Application of
// it is not created and the set reports Argo CD's error
// (ErrorOccurred=True, ResourcesUpToDate=False, reason
// ApplicationValidationError, "application references project my-project
// which does not exist"), while its Application of project default is
// created and synced. Once the AppProject is created the set writes the
// Application, which syncs, and the set is up to date, without a restart.
func TestSetForMissingProject(t *testing.T) {
	t.Parallel()
	e := startWith(t, nil, true)
	url := e.repo(t, "guestbook", map[string]string{"apps/one/cm.yaml": configMap("one"), "apps/two/cm.yaml": configMap("two")})
	dest := cluster.TestNamespace(t)
	e.createSet(t, fmt.Sprintf(`
metadata: {name: guestbook}
spec:
  goTemplate: true
  generators:
  - list:
      elements:
      - {name: dev, project: default, folder: apps/one}
      - {name: prod, project: my-project, folder: apps/two}
  template:
    metadata:
      name: 'guestbook-{{.name}}'
    spec:
      project: '{{.project}}'
      source: {repoURL: %s, targetRevision: main, path: '{{.folder}}'}
      destination: {server: https://kubernetes.default.svc, namespace: %s}
      syncPolicy: {automated: {prune: true}}
`, url, dest))
	e.waitSynced(t, "guestbook-dev")
	const want = "application references project my-project which does not exist"
	eventually(t, "the set's error condition", func() (bool, string) {
		s := e.set(t, "guestbook")
		errc, _ := condition(s, appsets.ConditionErrorOccurred)
		upd, _ := condition(s, appsets.ConditionResourcesUpToDate)
		ok := errc.Status == "True" && errc.Reason == appsets.ReasonApplicationValidationError && strings.Contains(errc.Message, want) &&
			upd.Status == "False" && strings.Contains(upd.Message, want)
		return ok, fmt.Sprintf("%+v", s.Status.Conditions)
	})
	if a := e.app(t, "guestbook-prod"); a != nil {
		t.Fatalf("the Application of the missing project was created: %+v", a.Spec)
	}
	if e.configMapExists(t, dest, "two") {
		t.Fatal("the missing project's app wrote its ConfigMap")
	}
	var missing *appsets.MissingProjectError
	if err := fmt.Errorf("w: %w", &appsets.Error{Set: "ns/s", App: "a", Err: &appsets.MissingProjectError{Project: "p"}}); !errors.As(err, &missing) {
		t.Fatal("appsets.Error does not unwrap to *MissingProjectError")
	}

	proj := controller.NewAppProject()
	proj.SetNamespace(e.ns)
	proj.SetName("my-project")
	proj.Object["spec"] = map[string]any{"sourceRepos": []any{"*"},
		"destinations": []any{map[string]any{"server": "https://kubernetes.default.svc", "namespace": dest}}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.c.Create(ctx, proj); err != nil {
		t.Fatal(err)
	}
	e.waitSynced(t, "guestbook-prod")
	if !e.configMapExists(t, dest, "two") {
		t.Fatal("the app of the project created since did not write its ConfigMap")
	}
	eventually(t, "the set up to date", func() (bool, string) {
		s := e.set(t, "guestbook")
		errc, _ := condition(s, appsets.ConditionErrorOccurred)
		upd, _ := condition(s, appsets.ConditionResourcesUpToDate)
		return errc.Status == "False" && upd.Status == "True", fmt.Sprintf("%+v", s.Status.Conditions)
	})
	if a := e.app(t, "guestbook-prod"); a.Spec.Project != "my-project" {
		t.Fatalf("guestbook-prod's project = %q", a.Spec.Project)
	}
}
