package preview

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/kubegitops/gitops"
)

func runPreview(t *testing.T, o Options) Report {
	t.Helper()
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func names(rep Report, status ...AppStatus) []string {
	var out []string
	for _, a := range rep.Apps {
		if len(status) == 0 || slices.Contains(status, a.Status) {
			out = append(out, a.Name)
		}
	}
	sort.Strings(out)
	return out
}

const fixtureApps = 35

func TestSharedBaseChangeReportsExactlyItsApps(t *testing.T) {
	t.Parallel()
	r := newRepo(t, fixture())
	head := r.commit(t, map[string]string{"base/deployment.yaml": deployment("web", 2)})
	rep := runPreview(t, r.options(t, r.first, head))
	want := []string{"k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8"}
	if got := names(rep, AppChanged); !slices.Equal(got, want) {
		t.Fatalf("changed apps %v, want %v (all: %+v)", got, want, rep.Apps)
	}
	if len(rep.Apps) != len(want) {
		t.Fatalf("apps reported %v, want only %v", names(rep), want)
	}
	for _, a := range rep.Apps {
		if len(a.Objects) != 1 || a.Objects[0].Change != Changed || !strings.Contains(a.Objects[0].Diff, "+  replicas: 2") {
			t.Fatalf("%s: objects %+v, want the Deployment's replicas changed", a.Name, a.Objects)
		}
		if a.Reason != "reads base/deployment.yaml" {
			t.Fatalf("%s: reason %q", a.Name, a.Reason)
		}
	}
	if rep.Renders.Base != fixtureApps || rep.Renders.Head != len(want) {
		t.Fatalf("renders %+v, want every app at base (%d renders) and %d at head", rep.Renders, fixtureApps, len(want))
	}
	if rep.Unchanged != fixtureApps-len(want) || rep.ExitCode() != 1 {
		t.Fatalf("unchanged %d exit %d", rep.Unchanged, rep.ExitCode())
	}
	if !slices.Equal(rep.ChangedPaths, []string{"base/deployment.yaml"}) {
		t.Fatalf("changed paths %v", rep.ChangedPaths)
	}
}

func TestValuesChangeReportsOneApp(t *testing.T) {
	t.Parallel()
	r := newRepo(t, fixture())
	head := r.commit(t, map[string]string{"values/h2.yaml": "color: green\n"})
	rep := runPreview(t, r.options(t, r.first, head))
	if got := names(rep); !slices.Equal(got, []string{"h2"}) {
		t.Fatalf("apps %v, want [h2]", got)
	}
	a := rep.Apps[0]
	if len(a.Objects) != 1 || a.Objects[0].Key.String() != "ConfigMap h2/h2-web" || !strings.Contains(a.Objects[0].Diff, `+  color: green`) {
		t.Fatalf("objects %+v", a.Objects)
	}
	if rep.Renders.Head != 1 {
		t.Fatalf("head renders %d, want 1", rep.Renders.Head)
	}
}

func TestAppSetChangeReportsAppsAddedAndRemoved(t *testing.T) {
	t.Parallel()
	r := newRepo(t, fixture())
	head := r.commit(t, map[string]string{
		"apps/appsets.yaml": listSet("a", "c", "d") + envSet,
		"envs/e7/cm.yaml":   configMap("e7", "v1"),
		"envs/e1/cm.yaml":   "",
		"children/c3.yaml":  childApp("c3", "plain/p4"),
	})
	rep := runPreview(t, r.options(t, r.first, head))
	if got, want := names(rep, AppAdded), []string{"c3", "env-e7", "list-d"}; !slices.Equal(got, want) {
		t.Fatalf("added %v, want %v (all %+v)", got, want, rep.Apps)
	}
	if got, want := names(rep, AppRemoved), []string{"env-e1", "list-b"}; !slices.Equal(got, want) {
		t.Fatalf("removed %v, want %v", got, want)
	}
	// The parent of c3 changed too: it renders one more Application.
	if got := names(rep, AppChanged); !slices.Equal(got, []string{"root"}) {
		t.Fatalf("changed %v, want [root]", got)
	}
	for _, a := range rep.Apps {
		switch a.Status {
		case AppAdded:
			if len(a.Objects) != 1 || a.Objects[0].Change != Added {
				t.Fatalf("%s: %+v", a.Name, a.Objects)
			}
		case AppRemoved:
			if len(a.Objects) != 1 || a.Objects[0].Change != Removed {
				t.Fatalf("%s: %+v", a.Name, a.Objects)
			}
		}
	}
	if rep.Apps[0].Origin == "" || rep.Renders.Head != 4 { // root, c3, env-e7, list-d
		t.Fatalf("head renders %d, want 4; origin %q", rep.Renders.Head, rep.Apps[0].Origin)
	}
}

func TestRenderErrorAtHeadFails(t *testing.T) {
	t.Parallel()
	r := newRepo(t, fixture())
	head := r.commit(t, map[string]string{"overlays/k3/kustomization.yaml": "resources:\n- ../../missing\n"})
	rep := runPreview(t, r.options(t, r.first, head))
	if got := names(rep, AppFailed); !slices.Equal(got, []string{"k3"}) {
		t.Fatalf("failed %v, want [k3]", got)
	}
	if rep.Apps[0].Error == "" || !strings.Contains(rep.Apps[0].Error, "missing") {
		t.Fatalf("error %q does not name what is missing", rep.Apps[0].Error)
	}
	if rep.ExitCode() != 2 {
		t.Fatalf("exit %d, want 2", rep.ExitCode())
	}
	if md := rep.Markdown(0); !strings.Contains(md, "**failed**") || !strings.Contains(md, "Render failed") {
		t.Fatalf("markdown does not show the failure:\n%s", md)
	}
}

func TestCELPolicyViolationFailsWithItsRule(t *testing.T) {
	t.Parallel()
	r := newRepo(t, fixture())
	head := r.commit(t, map[string]string{"base/deployment.yaml": deployment("web", 5)})
	pol, err := gitops.NewCELPolicy("fleet", gitops.CELRule{Name: "max-replicas", Kinds: []string{"apps/Deployment"},
		Expression: "object.spec.replicas <= 3", Message: "at most 3 replicas"})
	if err != nil {
		t.Fatal(err)
	}
	o := r.options(t, r.first, head)
	o.Policies = []gitops.Policy{pol}
	rep := runPreview(t, o)
	if got := names(rep, AppFailed); len(got) != 8 {
		t.Fatalf("failed %v, want the 8 overlays of the base", got)
	}
	for _, a := range rep.Apps {
		if len(a.Policy) != 1 || !strings.Contains(a.Policy[0], "(max-replicas): at most 3 replicas") {
			t.Fatalf("%s: policy %v", a.Name, a.Policy)
		}
	}
	if rep.ExitCode() != 2 {
		t.Fatalf("exit %d", rep.ExitCode())
	}
	// The unchanged apps are not judged: solo has 1 replica and no change.
	if slices.Contains(names(rep), "solo") {
		t.Fatal("solo reported")
	}
}

func TestProjectRulesRunOnTheHeadRender(t *testing.T) {
	t.Parallel()
	r := newRepo(t, fixture())
	proj := `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: default
spec:
  sourceRepos: ['*']
  destinations: [{server: '*', namespace: '*'}]
  namespaceResourceBlacklist: [{group: '', kind: Secret}]
`
	head := r.commit(t, map[string]string{
		"apps/project.yaml":    proj,
		"plain/p5/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  password: hunter2\n",
	})
	rep := runPreview(t, r.options(t, r.first, head))
	if got := names(rep, AppFailed); !slices.Equal(got, []string{"p5"}) {
		t.Fatalf("failed %v, want [p5] (%+v)", got, rep.Apps)
	}
	a := rep.Apps[0]
	if len(a.Policy) != 1 || !strings.Contains(a.Policy[0], "resource :Secret is not permitted in project default") {
		t.Fatalf("policy %v", a.Policy)
	}
	if len(a.Objects) != 1 || strings.Contains(a.Objects[0].Diff, "hunter2") || !strings.Contains(a.Objects[0].Diff, "+masked-1+") {
		t.Fatalf("the Secret is not masked: %+v", a.Objects)
	}
}

func TestNoChangeExitsZero(t *testing.T) {
	t.Parallel()
	r := newRepo(t, fixture())
	head := r.commit(t, map[string]string{"README.md": "fleet of apps\n"})
	rep := runPreview(t, r.options(t, r.first, head))
	if len(rep.Apps) != 0 || rep.ExitCode() != 0 || rep.Renders.Head != 0 || rep.Unchanged != fixtureApps {
		t.Fatalf("report %+v", rep)
	}
	if md := rep.Markdown(0); !strings.Contains(md, "No app changes.") {
		t.Fatalf("markdown:\n%s", md)
	}
}

func TestBadOptionsAndRevisions(t *testing.T) {
	t.Parallel()
	r := newRepo(t, fixture())
	o := r.options(t, r.first, "")
	if _, err := Run(context.Background(), o); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("err %v", err)
	}
	o = r.options(t, r.first, "no-such-branch")
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), `head "no-such-branch"`) {
		t.Fatalf("err %v", err)
	}
	o = r.options(t, r.first, r.first)
	o.Apps = []string{"nowhere"}
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "apps nowhere") {
		t.Fatalf("err %v", err)
	}
}
