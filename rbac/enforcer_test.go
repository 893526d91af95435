package rbac

import (
	"strings"
	"testing"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// request is one row of a table: who asks for what, and the answer.
type request struct {
	sub           Subject
	res, act, obj string
	want          bool
	via           string // when set, the subject that decided
	ruleSource    string // when set, the deciding line's source
}

func mustEnforcer(t *testing.T, cm map[string]string, projects ...v1alpha1.AppProject) *Enforcer {
	t.Helper()
	cfg, err := Load(cm)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	e, err := NewEnforcer(cfg, projects)
	if err != nil {
		t.Fatalf("NewEnforcer: %v", err)
	}
	return e
}

func runTable(t *testing.T, e *Enforcer, rows []request) {
	t.Helper()
	for _, r := range rows {
		d := e.Decide(r.sub, r.res, r.act, r.obj)
		name := r.sub.Name + strings.Join(r.sub.Groups, "+") + " " + r.act + " " + r.res + " " + r.obj
		if d.Allowed != r.want {
			t.Errorf("%s: allowed=%v, want %v (decision %+v)", name, d.Allowed, r.want, d)
		}
		if r.via != "" && d.Via != r.via {
			t.Errorf("%s: decided via %q, want %q", name, d.Via, r.via)
		}
		if r.ruleSource != "" && d.Rule.Source != r.ruleSource {
			t.Errorf("%s: decided by %q from %s line %d, want a line of %s", name, d.Rule, d.Rule.Source, d.Rule.Line, r.ruleSource)
		}
		if e.Enforce(r.sub, r.res, r.act, r.obj) != d.Allowed {
			t.Errorf("%s: Enforce disagrees with Decide", name)
		}
	}
}

func user(name string, groups ...string) Subject { return Subject{Name: name, Groups: groups} }

// TestDocumentedExamples runs the policy examples of Argo CD's RBAC
// documentation (docs/operator-manual/rbac.md, argocd-rbac-cm.yaml).
func TestDocumentedExamples(t *testing.T) {
	t.Run("org-admin with policy.default role:readonly", func(t *testing.T) {
		e := mustEnforcer(t, map[string]string{
			"policy.default": "role:readonly",
			"policy.csv": `p, role:org-admin, applications, *, */*, allow
p, role:org-admin, clusters, get, *, allow
p, role:org-admin, repositories, get, *, allow
p, role:org-admin, repositories, create, *, allow
p, role:org-admin, repositories, update, *, allow
p, role:org-admin, repositories, delete, *, allow

g, your-github-org:your-team, role:org-admin
`})
		team := user("alice", "your-github-org:your-team")
		runTable(t, e, []request{
			{sub: team, res: "applications", act: "create", obj: "someproj/someapp", want: true, via: "your-github-org:your-team", ruleSource: "policy.csv"},
			{sub: team, res: "applications", act: "sync", obj: "p/a", want: true},
			{sub: team, res: "repositories", act: "create", obj: "https://github.com/x/y", want: true},
			{sub: team, res: "clusters", act: "create", obj: "somecluster", want: false},
			{sub: team, res: "clusters", act: "get", obj: "somecluster", want: true, via: "role:readonly"},
			// Everyone else: the default role, read-only.
			{sub: user("bob", "other-team"), res: "applications", act: "get", obj: "p/a", want: true, via: "role:readonly", ruleSource: "builtin-policy.csv"},
			{sub: user("bob", "other-team"), res: "applications", act: "sync", obj: "p/a", want: false},
			{sub: user("bob"), res: "projects", act: "update", obj: "p", want: false},
		})
	})
	t.Run("staging-db-admins in one project", func(t *testing.T) {
		e := mustEnforcer(t, map[string]string{"policy.csv": `p, role:staging-db-admins, applications, create, staging-db-admins/*, allow
p, role:staging-db-admins, applications, delete, staging-db-admins/*, allow
p, role:staging-db-admins, applications, get, staging-db-admins/*, allow
p, role:staging-db-admins, applications, override, staging-db-admins/*, allow
p, role:staging-db-admins, applications, sync, staging-db-admins/*, allow
p, role:staging-db-admins, applications, update, staging-db-admins/*, allow
p, role:staging-db-admins, projects, get, staging-db-admins, allow
g, db-admins, role:staging-db-admins
`})
		runTable(t, e, []request{
			{sub: user("role:staging-db-admins"), res: "applications", act: "get", obj: "staging-db-admins/*", want: true},
			{sub: user("role:staging-db-admins"), res: "applications", act: "get", obj: "prod/db", want: false},
			{sub: user("", "db-admins"), res: "applications", act: "sync", obj: "staging-db-admins/pg", want: true, via: "db-admins"},
			{sub: user("", "db-admins"), res: "projects", act: "get", obj: "staging-db-admins", want: true},
			{sub: user("", "db-admins"), res: "projects", act: "get", obj: "other", want: false},
			{sub: user("", "db-admins"), res: "applications", act: "rollback", obj: "staging-db-admins/pg", want: false},
		})
	})
	t.Run("argocd-rbac-cm.yaml: group sync, group admin, overlay key", func(t *testing.T) {
		e := mustEnforcer(t, map[string]string{
			"policy.csv": `# Grant all members of the group 'my-org:team-alpha' the ability to sync apps in 'my-project'
p, my-org:team-alpha, applications, sync, my-project/*, allow
g, my-org:team-alpha, role:team-alpha
# Grant all members of 'my-org:team-beta' admins
g, my-org:team-beta, role:admin
`,
			"policy.overlay.csv": "p, role:tester, applications, *, */*, allow\ng, my-org:testers, role:tester\n",
			"scopes":             "[groups]",
			"policy.matchMode":   "glob",
		})
		runTable(t, e, []request{
			{sub: user("a", "my-org:team-alpha"), res: "applications", act: "sync", obj: "my-project/app", want: true},
			{sub: user("a", "my-org:team-alpha"), res: "applications", act: "sync", obj: "other/app", want: false},
			{sub: user("b", "my-org:team-beta"), res: "clusters", act: "delete", obj: "https://c", want: true, via: "my-org:team-beta"},
			{sub: user("c", "my-org:testers"), res: "applications", act: "delete", obj: "x/y", want: true, ruleSource: "policy.overlay.csv"},
		})
	})
	t.Run("a group granted only by p lines, with no g binding, is not checked", func(t *testing.T) {
		// Argo CD's documented rule (#7952): groups count only when a g
		// line binds them to a role.
		e := mustEnforcer(t, map[string]string{"policy.csv": "p, some:group, logs, get, some-proj/some-app, allow\n"})
		runTable(t, e, []request{
			{sub: user("u", "some:group"), res: "logs", act: "get", obj: "some-proj/some-app", want: false},
			// As a user name it matches directly.
			{sub: user("some:group"), res: "logs", act: "get", obj: "some-proj/some-app", want: true},
		})
	})
}

// TestDenyWins: a deny matching the subject or any of its bound groups
// refuses what an allow grants, except what policy.default allows.
func TestDenyWins(t *testing.T) {
	e := mustEnforcer(t, map[string]string{
		"policy.default": "role:viewer",
		"policy.csv": `p, role:viewer, applications, get, */*, allow
p, role:dev, applications, *, */*, allow
p, role:dev, applications, delete, prod/*, deny
p, role:dev, applications, get, secret/*, deny
p, role:frozen, applications, sync, */*, deny
g, devs, role:dev
g, freeze, role:frozen
g, alice, role:dev
`})
	runTable(t, e, []request{
		{sub: user("alice"), res: "applications", act: "delete", obj: "dev/app", want: true},
		{sub: user("alice"), res: "applications", act: "delete", obj: "prod/app", want: false, via: "alice", ruleSource: "policy.csv"},
		{sub: user("bob", "devs"), res: "applications", act: "delete", obj: "prod/app", want: false},
		// A deny reached through one group beats an allow through another.
		{sub: user("bob", "devs", "freeze"), res: "applications", act: "sync", obj: "dev/app", want: false, via: "freeze"},
		{sub: user("bob", "devs"), res: "applications", act: "sync", obj: "dev/app", want: true, via: "devs"},
		// The default role's allow is not taken away by a deny.
		{sub: user("alice"), res: "applications", act: "get", obj: "secret/app", want: true, via: "role:viewer"},
	})
	if d := e.Decide(user("bob", "devs"), "applications", "delete", "prod/app"); d.Rule.String() != "p, role:dev, applications, delete, prod/*, deny" || d.Rule.Line != 3 {
		t.Errorf("deny decision names %q line %d", d.Rule, d.Rule.Line)
	}
}
