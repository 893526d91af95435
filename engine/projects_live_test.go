package engine

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSetProjectsLive: an app naming a project the engine lacks fails
// with Argo CD's message (a *MissingProjectError, InvalidSpecError) and is
// not synced; SetProjects adds the project without a new engine and the
// app refreshes; a project whose rules change is compared again (the
// refresh memo must not keep the verdict of the old rules); a refused
// project fails its apps naming why; an implicit default remains until a
// project named default replaces it.
func TestSetProjectsLive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	e := newEngine(t, nil)
	dir := repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"})
	app := dirApp("team", dir, ns)
	app.Spec.Project = "team"

	st, err := e.Refresh(ctx, app)
	var missing *MissingProjectError
	if !errors.As(err, &missing) || missing.Project != "team" {
		t.Fatalf("refresh of an app of a missing project: %v, want *MissingProjectError", err)
	}
	if len(st.Conditions) != 1 || st.Conditions[0].Type != appstatus.ConditionInvalidSpec ||
		st.Conditions[0].Message != "Application referencing project team which does not exist" {
		t.Fatalf("conditions %+v, want Argo CD's InvalidSpecError", st.Conditions)
	}
	if _, err := e.Sync(ctx, app, SyncRequest{}); !errors.As(err, &missing) {
		t.Fatalf("sync of an app of a missing project: %v", err)
	}

	team := Project{ObjectMeta: metav1.ObjectMeta{Name: "team"}, Spec: ProjectSpec{SourceRepos: []string{"*"},
		Destinations: []ApplicationDestination{{Server: "*", Namespace: ns}}}}
	if got := e.Settings().SetProjects([]Project{team}, nil); !slices.Equal(got, []string{"team"}) {
		t.Fatalf("SetProjects changed %v, want [team]", got)
	}
	if got := e.Settings().SetProjects([]Project{team}, nil); len(got) != 0 {
		t.Fatalf("the same projects again changed %v", got)
	}
	if st, err = e.Refresh(ctx, app); err != nil || st.Sync != appstatus.OutOfSync {
		t.Fatalf("refresh once the project exists: %s %v", st.Sync, err)
	}
	if _, err := e.Refresh(ctx, app); err != nil {
		t.Fatalf("second refresh (memoized): %v", err)
	}

	strict := team
	strict.Spec.NamespaceResourceBlacklist = []metav1.GroupKind{{Group: "", Kind: "ConfigMap"}}
	e.Settings().SetProjects([]Project{strict}, nil)
	if _, err := e.Refresh(ctx, app); !errors.Is(err, ErrPolicy) {
		t.Fatalf("refresh after the project denied ConfigMaps: %v, want a policy refusal", err)
	}

	why := errors.Join(v1alpha1.ErrUnsupported)
	e.Settings().SetProjects(nil, map[string]error{"team": why})
	var refused *RefusedProjectError
	if _, err := e.Refresh(ctx, app); !errors.As(err, &refused) || !errors.Is(err, v1alpha1.ErrUnsupported) {
		t.Fatalf("refresh of an app of a refused project: %v", err)
	}

	if p, err := e.Settings().Project("default"); err != nil || !slices.Equal(p.Spec.SourceNamespaces, []string{"*"}) {
		t.Fatalf("implicit default: %+v %v", p, err)
	}
	def := Project{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: ProjectSpec{SourceRepos: []string{"https://example.com/*"}}}
	e.Settings().SetProjects([]Project{def}, nil)
	if p, err := e.Settings().Project(""); err != nil || !slices.Equal(p.Spec.SourceRepos, def.Spec.SourceRepos) {
		t.Fatalf("a project named default should replace the implicit one: %+v %v", p, err)
	}
}
