package rbac

import (
	"errors"
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

// denyPolicy is the argocd-rbac-cm of the per-subject tests: devs may do
// anything but delete in prod; freeze may not sync; alice is a dev
// herself; everyone may get (policy.default), which no deny takes away.
var denyPolicy = map[string]string{
	"policy.default": "role:viewer",
	"policy.csv": `p, role:viewer, applications, get, */*, allow
p, role:dev, applications, *, */*, allow
p, role:dev, applications, delete, prod/*, deny
p, role:dev, applications, get, secret/*, deny
p, role:frozen, applications, sync, */*, deny
g, devs, role:dev
g, freeze, role:frozen
g, alice, role:dev
p, carol, applications, sync, */*, deny
g, carol, role:dev
`}

// TestPerSubject: as Argo CD decides (argo-cd#17547), the user and each
// of its bound groups are checked on their own, and the request is allowed
// when any of them is; a deny refuses only the subject it matches.
func TestPerSubject(t *testing.T) {
	e := mustEnforcer(t, denyPolicy)
	runTable(t, e, []request{
		{sub: user("alice"), res: "applications", act: "delete", obj: "dev/app", want: true},
		// An explicit deny on the user (through its own g line) refuses it.
		{sub: user("alice"), res: "applications", act: "delete", obj: "prod/app", want: false, via: "alice", ruleSource: "policy.csv"},
		{sub: user("bob", "devs"), res: "applications", act: "delete", obj: "prod/app", want: false, via: "devs"},
		// A user in two groups, one allowed to sync and one denied: allowed.
		{sub: user("bob", "devs", "freeze"), res: "applications", act: "sync", obj: "dev/app", want: true, via: "devs"},
		{sub: user("bob", "freeze", "devs"), res: "applications", act: "sync", obj: "dev/app", want: true, via: "devs"},
		// The user allowed by its name, one group denied: allowed.
		{sub: user("alice", "freeze"), res: "applications", act: "sync", obj: "dev/app", want: true, via: "alice"},
		// A deny on the user's own name refuses the user, not its groups:
		// carol is denied sync, but the devs group she is in may sync.
		{sub: user("carol"), res: "applications", act: "sync", obj: "dev/app", want: false, via: "carol"},
		{sub: user("carol", "devs"), res: "applications", act: "sync", obj: "dev/app", want: true, via: "devs"},
		// The only group denies: refused by that line.
		{sub: user("dan", "freeze"), res: "applications", act: "sync", obj: "dev/app", want: false, via: "freeze"},
		// The default role's allow is not taken away by a deny, and it
		// alone is checked for a subject with no lines.
		{sub: user("alice"), res: "applications", act: "get", obj: "secret/app", want: true, via: "role:viewer"},
		{sub: user("nobody"), res: "applications", act: "get", obj: "any/app", want: true, via: "role:viewer", ruleSource: "policy.csv"},
		{sub: user("nobody"), res: "applications", act: "sync", obj: "any/app", want: false, via: ""},
	})
	// argo-cd#17547 as reported: scopes [email, groups], the user's email
	// is denied projects get by role:test, its group is admin: allowed.
	issue := map[string]string{"policy.csv": "g, k8s-admins, role:admin\np, role:test, projects, get, *, deny\ng, userA@example.com, role:test\n",
		"policy.default": "", "policy.matchMode": "glob", "scopes": "[email,groups]"}
	cfg, err := Load(issue)
	if err != nil {
		t.Fatal(err)
	}
	userA := Subject{Name: "userA-sub", Groups: GroupsFromClaims(map[string]any{"email": "userA@example.com", "groups": []any{"k8s-admins"}}, cfg.Scopes)}
	runTable(t, mustEnforcer(t, issue), []request{
		{sub: userA, res: "projects", act: "get", obj: "p", want: true, via: "k8s-admins"},
		{sub: Subject{Name: "userA-sub", Groups: []string{"userA@example.com"}}, res: "projects", act: "get", obj: "p", want: false, via: "userA@example.com"},
	})

	d := e.Decide(user("bob", "devs"), "applications", "delete", "prod/app")
	if d.Rule.String() != "p, role:dev, applications, delete, prod/*, deny" || d.Rule.Line != 3 {
		t.Errorf("deny decision names %q line %d", d.Rule, d.Rule.Line)
	}
	var subjects []string
	for _, c := range d.Checked {
		subjects = append(subjects, c.Subject)
	}
	if strings.Join(subjects, ",") != "role:viewer,bob,devs" || !d.Checked[0].Default {
		t.Errorf("checked %v, want the default role, the user, then its bound group", d.Checked)
	}
}

// TestDenyAcrossSubjects: the stricter option refuses when a deny matches
// any of the subject's name and groups, even if another is allowed; the
// default role still grants what it allows.
func TestDenyAcrossSubjects(t *testing.T) {
	cfg, err := Load(denyPolicy)
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEnforcerWithOptions(cfg, nil, EnforcerOptions{DenyAcrossSubjects: true})
	if err != nil {
		t.Fatal(err)
	}
	runTable(t, e, []request{
		{sub: user("bob", "devs", "freeze"), res: "applications", act: "sync", obj: "dev/app", want: false, via: "freeze"},
		{sub: user("alice", "freeze"), res: "applications", act: "sync", obj: "dev/app", want: false, via: "freeze"},
		{sub: user("carol", "devs"), res: "applications", act: "sync", obj: "dev/app", want: false, via: "carol"},
		{sub: user("bob", "devs"), res: "applications", act: "sync", obj: "dev/app", want: true, via: "devs"},
		{sub: user("alice", "freeze"), res: "applications", act: "get", obj: "secret/app", want: true, via: "role:viewer"},
	})
	err = e.Decide(user("bob", "devs", "freeze"), "applications", "sync", "dev/app").Err()
	want := `permission denied: applications, sync, dev/app: role:viewer (policy.default): no line matched; bob: no line matched; ` +
		`devs: allowed by policy.csv line 2 "p, role:dev, applications, *, */*, allow", but a deny of another subject wins (DenyAcrossSubjects); ` +
		`freeze: denied by policy.csv line 5 "p, role:frozen, applications, sync, */*, deny"`
	if err == nil || err.Error() != want {
		t.Errorf("strict refusal:\n got %v\nwant %s", err, want)
	}
}

// TestRefusalNamesTheLine: a refusal's error names the request, each
// subject checked and the line that refused it (source, line number and
// text), or that no line matched; the groups no g line binds are named as
// not checked; an allowed request has no error.
func TestRefusalNamesTheLine(t *testing.T) {
	e := mustEnforcer(t, denyPolicy, project("team-a", v1alpha1.ProjectRole{Name: "ci",
		Policies: []string{"p, proj:team-a:ci, applications, sync, team-a/*, allow"}}), project("team-b"))
	for _, tc := range []struct {
		sub           Subject
		res, act, obj string
		want          string
	}{
		{user("bob", "staff", "freeze"), "applications", "sync", "dev/app",
			`permission denied: applications, sync, dev/app: role:viewer (policy.default): no line matched; bob: no line matched; ` +
				`freeze: denied by policy.csv line 5 "p, role:frozen, applications, sync, */*, deny" ` +
				`(groups bound to no role by a g line, not checked: staff)`},
		{user("alice"), "applications", "delete", "prod/app",
			`permission denied: applications, delete, prod/app: role:viewer (policy.default): no line matched; ` +
				`alice: denied by policy.csv line 3 "p, role:dev, applications, delete, prod/*, deny"`},
		{user("proj:team-a:ci"), "applications", "sync", "team-b/app",
			`permission denied: applications, sync, team-b/app: role:viewer (policy.default): no line matched; ` +
				`proj:team-a:ci: a role of project team-a asking about project team-b`},
	} {
		d := e.Decide(tc.sub, tc.res, tc.act, tc.obj)
		err := d.Err()
		var de *DeniedError
		if d.Allowed || !errors.As(err, &de) || !errors.Is(err, ErrPermissionDenied) || err.Error() != tc.want {
			t.Errorf("%v %s %s %s:\n got %v\nwant %s", tc.sub, tc.res, tc.act, tc.obj, err, tc.want)
		}
	}
	if err := e.Decide(user("alice"), "applications", "sync", "dev/app").Err(); err != nil {
		t.Errorf("allowed request: %v", err)
	}
	plain := mustEnforcer(t, nil)
	if err := plain.Decide(user("", "nobody"), "clusters", "get", "c").Err(); err == nil ||
		err.Error() != "permission denied: clusters, get, c: no subject to check (groups bound to no role by a g line, not checked: nobody)" {
		t.Errorf("no subject: %v", err)
	}
}
