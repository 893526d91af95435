package rbac_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/rbac"
)

// An argocd-rbac-cm with a team role and a read-only default: the team
// syncs, everyone reads, nobody else syncs.
func ExampleEnforcer_Decide() {
	cfg, err := rbac.Load(map[string]string{
		"policy.default": "role:readonly",
		"policy.csv": `p, role:org-admin, applications, *, */*, allow
g, your-github-org:your-team, role:org-admin
`,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	e, err := rbac.NewEnforcer(cfg, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	claims := map[string]any{"sub": "alice", "groups": []any{"your-github-org:your-team"}}
	alice := rbac.Subject{Name: "alice", Groups: rbac.GroupsFromClaims(claims, cfg.Scopes)}
	d := e.Decide(alice, rbac.ResourceApplications, rbac.ActionSync, rbac.AppObject("default", "argocd", "guestbook", "argocd"))
	fmt.Println(d.Allowed, "via", d.Via, "by", d.Rule.Source, "line", d.Rule.Line)
	bob := rbac.Subject{Name: "bob"}
	fmt.Println(e.Enforce(bob, rbac.ResourceApplications, rbac.ActionGet, "default/guestbook"))
	fmt.Println(e.Enforce(bob, rbac.ResourceApplications, rbac.ActionSync, "default/guestbook"))
	// Output:
	// true via your-github-org:your-team by policy.csv line 1
	// true
	// false
}

// A project role grants its group access to the project's apps only.
func ExampleProjectPolicies() {
	team := v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}, Spec: v1alpha1.AppProjectSpec{
		Roles: []v1alpha1.ProjectRole{{
			Name:     "deployer",
			Policies: []string{"p, proj:team-a:deployer, applications, sync, team-a/*, allow"},
			Groups:   []string{"my-org:team-a"},
		}},
	}}
	rules, err := rbac.ProjectPolicies([]v1alpha1.AppProject{team})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rules["team-a"] {
		fmt.Println(r)
	}
	e, err := rbac.NewEnforcer(nil, []v1alpha1.AppProject{team})
	if err != nil {
		fmt.Println(err)
		return
	}
	member := rbac.Subject{Name: "carol", Groups: []string{"my-org:team-a"}}
	fmt.Println(e.Enforce(member, rbac.ResourceApplications, rbac.ActionSync, "team-a/api"))
	fmt.Println(e.Enforce(member, rbac.ResourceApplications, rbac.ActionSync, "team-b/api"))
	// Output:
	// p, proj:team-a:deployer, projects, get, team-a, allow
	// p, proj:team-a:deployer, applications, sync, team-a/*, allow
	// g, my-org:team-a, proj:team-a:deployer
	// true
	// false
}

// A malformed line is an error naming the key and the line.
func ExampleLoad_error() {
	_, err := rbac.Load(map[string]string{"policy.csv": "g, a, role:admin\np, role:x, applications, get, */*\n"})
	fmt.Println(err)
	// Output:
	// rbac: policy.csv line 2 "p, role:x, applications, get, */*": malformed policy line: a p line has 5 fields (subject, resource, action, object, allow|deny), got 4
}
