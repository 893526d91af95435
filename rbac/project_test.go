package rbac

import (
	"errors"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

func project(name string, roles ...v1alpha1.ProjectRole) v1alpha1.AppProject {
	return v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.AppProjectSpec{Roles: roles}}
}

// TestProjectRoles: an AppProject's roles grant their lines to the role
// subject and to the groups bound to it, only within the project; the
// role may get its project; a deny in argocd-rbac-cm still wins.
func TestProjectRoles(t *testing.T) {
	teamA := project("team-a", v1alpha1.ProjectRole{
		Name: "deployer",
		Policies: []string{
			"p, proj:team-a:deployer, applications, get, team-a/*, allow",
			"p, proj:team-a:deployer, applications, sync, team-a/*, allow",
			"p, proj:team-a:deployer, applications, sync, team-a/prod-*, deny",
			"p, proj:team-a:deployer, logs, get, team-a/apps-ns/*, allow",
			"p, proj:team-a:deployer, applicationsets, create, team-a/*, allow",
		},
		Groups: []string{"my-org:team-a"},
	})
	e := mustEnforcer(t, map[string]string{"policy.csv": "p, role:no-web, applications, sync, */web, deny\ng, my-org:team-a, role:no-web\n"},
		teamA, project("team-b"))
	member := user("alice", "my-org:team-a")
	token := user("proj:team-a:deployer")
	runTable(t, e, []request{
		{sub: member, res: "applications", act: "sync", obj: "team-a/api", want: true, via: "my-org:team-a", ruleSource: "AppProject team-a spec.roles[0].policies"},
		{sub: member, res: "applications", act: "sync", obj: "team-a/prod-db", want: false},
		{sub: member, res: "applications", act: "sync", obj: "team-a/web", want: false, ruleSource: "policy.csv"},
		{sub: member, res: "applications", act: "sync", obj: "team-b/api", want: false},
		{sub: member, res: "applications", act: "delete", obj: "team-a/api", want: false},
		{sub: member, res: "projects", act: "get", obj: "team-a", want: true, ruleSource: "AppProject team-a spec.roles[0]"},
		{sub: member, res: "projects", act: "get", obj: "team-b", want: false},
		{sub: member, res: "logs", act: "get", obj: AppObject("team-a", "apps-ns", "api", "argocd"), want: true},
		{sub: member, res: "logs", act: "get", obj: AppObject("team-a", "argocd", "api", "argocd"), want: false},
		{sub: member, res: "applicationsets", act: "create", obj: "team-a/sets", want: true},
		// The role subject itself (a project token's subject).
		{sub: token, res: "applications", act: "get", obj: "team-a/api", want: true, via: "proj:team-a:deployer"},
		{sub: token, res: "applications", act: "get", obj: "team-b/api", want: false},
		{sub: token, res: "projects", act: "get", obj: "team-b", want: false},
		// A project not given: only the global policy applies.
		{sub: member, res: "applications", act: "get", obj: "team-c/api", want: false},
	})

	// The same subject on an enforcer without the project has nothing.
	plain := mustEnforcer(t, nil)
	if plain.Enforce(member, "applications", "sync", "team-a/api") {
		t.Error("project role granted without its AppProject")
	}
}

// TestProjectPolicies: the lines a project's roles become, and the lines
// Argo CD refuses in a project role, each named by project, role and line.
func TestProjectPolicies(t *testing.T) {
	got, err := ProjectPolicies([]v1alpha1.AppProject{project("p", v1alpha1.ProjectRole{
		Name: "r", Policies: []string{"p, proj:p:r, applications, sync, p/*, allow"}, Groups: []string{"g1"},
	}), project("empty")})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range got["p"] {
		lines = append(lines, r.String())
	}
	want := "p, proj:p:r, projects, get, p, allow|p, proj:p:r, applications, sync, p/*, allow|g, g1, proj:p:r"
	if strings.Join(lines, "|") != want {
		t.Errorf("lines %q, want %q", strings.Join(lines, "|"), want)
	}
	if _, ok := got["empty"]; ok {
		t.Error("a project without roles has policy lines")
	}
	for line, kind := range map[string]error{
		"p, proj:p:other, applications, sync, p/*, allow": ErrProjectPolicy,
		"p, proj:p:r, projects, update, p/*, allow":       ErrProjectPolicy,
		"p, proj:p:r, applications, sync, q/*, allow":     ErrProjectPolicy,
		"p, proj:p:r, applications, sync, p/a/b/c, allow": ErrProjectPolicy,
		"g, someone, proj:p:r":                            ErrProjectPolicy,
		"p, proj:p:r, applications, sync, p/*, permit":    ErrMalformedLine,
		"p, proj:p:r, applications, sync, p/*":            ErrMalformedLine,
		`p, proj:p:r, applications, sync, "p/*, allow`:    ErrMalformedLine,
	} {
		_, err := ProjectPolicies([]v1alpha1.AppProject{project("p", v1alpha1.ProjectRole{Name: "r", Policies: []string{"p, proj:p:r, applications, get, p/*, allow", line}})})
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, kind) || e.Source != "AppProject p spec.roles[0].policies" || e.Line != 2 {
			t.Errorf("%q: got %v, want an *Error (%v) naming AppProject p spec.roles[0].policies line 2", line, err, kind)
		}
	}
	// NewEnforcer refuses such a project too.
	if _, err := NewEnforcer(nil, []v1alpha1.AppProject{project("p", v1alpha1.ProjectRole{Name: "r", Policies: []string{"p, proj:p:r, applications, sync, q/*, allow"}})}); !errors.Is(err, ErrProjectPolicy) {
		t.Errorf("NewEnforcer with a bad project role: %v", err)
	}
}

// TestConcurrentDecisions: one Enforcer answers from many goroutines.
func TestConcurrentDecisions(t *testing.T) {
	e := mustEnforcer(t, map[string]string{"policy.csv": "g, devs, role:admin\n"}, project("p", v1alpha1.ProjectRole{Name: "r", Policies: []string{"p, proj:p:r, applications, get, p/*, allow"}, Groups: []string{"viewers"}}))
	var wg sync.WaitGroup
	fails := make(chan string, 64)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				if !e.Enforce(user("x", "devs"), "clusters", "delete", "c") || !e.Enforce(user("y", "viewers"), "applications", "get", "p/a") || e.Enforce(user("y", "viewers"), "applications", "sync", "p/a") {
					fails <- "wrong answer under concurrency"
					return
				}
			}
		}()
	}
	wg.Wait()
	close(fails)
	for f := range fails {
		t.Fatal(f)
	}
}
