package rbac

import "testing"

// TestBuiltinRoles: role:readonly reads everything and changes nothing;
// role:admin does everything the built-in policy lists; the local user
// admin is role:admin; a stranger without policy.default gets nothing.
func TestBuiltinRoles(t *testing.T) {
	e := mustEnforcer(t, nil)
	ro, admin := user("role:readonly"), user("role:admin")
	var rows []request
	for _, r := range []struct{ res, obj string }{
		{"applications", "p/a"}, {"applicationsets", "p/s"}, {"certificates", "c"}, {"clusters", "c"},
		{"repositories", "r"}, {"write-repositories", "r"}, {"projects", "p"}, {"accounts", "a"},
		{"gpgkeys", "k"}, {"logs", "p/a"},
	} {
		rows = append(rows,
			request{sub: ro, res: r.res, act: "get", obj: r.obj, want: true, ruleSource: "builtin-policy.csv"},
			request{sub: admin, res: r.res, act: "get", obj: r.obj, want: true, via: "role:admin"},
			request{sub: user("nobody"), res: r.res, act: "get", obj: r.obj, want: false})
	}
	for _, act := range []string{"create", "update", "update/apps/Deployment/ns/web", "delete", "delete//Pod/ns/web-1", "sync", "rollback", "override", "action/apps/Deployment/restart"} {
		rows = append(rows,
			request{sub: admin, res: "applications", act: act, obj: "p/a", want: true},
			request{sub: user("admin"), res: "applications", act: act, obj: "p/a", want: true},
			request{sub: ro, res: "applications", act: act, obj: "p/a", want: false})
	}
	rows = append(rows,
		request{sub: admin, res: "exec", act: "create", obj: "p/a", want: true},
		request{sub: ro, res: "exec", act: "create", obj: "p/a", want: false},
		request{sub: admin, res: "projects", act: "delete", obj: "p", want: true},
		request{sub: ro, res: "clusters", act: "update", obj: "c", want: false},
		request{sub: admin, res: "accounts", act: "delete", obj: "a", want: false}, // not in the built-in policy
	)
	runTable(t, e, rows)
}

// TestResourcesAndObjects: actions with globs, logs and exec, application
// sets in projects, and apps in other namespaces ("<project>/<ns>/<app>").
func TestResourcesAndObjects(t *testing.T) {
	e := mustEnforcer(t, map[string]string{"policy.csv": `p, role:ops, applications, action/apps/Deployment/*, */*, allow
p, role:ops, applications, action/*/*/restart, team/*, allow
p, role:ops, logs, get, team/*, allow
p, role:ops, exec, create, team/web, allow
p, role:ops, applicationsets, get, team/*, allow
p, role:ops, applicationsets, create, team/*, allow
p, role:ops, applications, sync, team/apps-ns/*, allow
g, ops, role:ops
`})
	ops := user("o", "ops")
	runTable(t, e, []request{
		{sub: ops, res: "applications", act: ResourceAction("apps", "Deployment", "restart"), obj: "any/app", want: true},
		{sub: ops, res: "applications", act: ResourceAction("apps", "Deployment", "pause-rollout"), obj: "any/app", want: true},
		{sub: ops, res: "applications", act: ResourceAction("argoproj.io", "Rollout", "restart"), obj: "team/app", want: true},
		{sub: ops, res: "applications", act: ResourceAction("argoproj.io", "Rollout", "restart"), obj: "other/app", want: false},
		{sub: ops, res: "applications", act: ResourceAction("", "Pod", "restart"), obj: "team/app", want: true},
		{sub: ops, res: "applications", act: ResourceAction("batch", "CronJob", "create-job"), obj: "team/app", want: false},
		{sub: ops, res: "logs", act: "get", obj: AppObject("team", "", "web", "argocd"), want: true},
		{sub: ops, res: "logs", act: "get", obj: AppObject("other", "", "web", "argocd"), want: false},
		{sub: ops, res: "exec", act: "create", obj: AppObject("team", "argocd", "web", "argocd"), want: true},
		{sub: ops, res: "exec", act: "create", obj: "team/api", want: false},
		{sub: ops, res: "applicationsets", act: "create", obj: AppSetObject("team", "", "sets", "argocd"), want: true},
		{sub: ops, res: "applicationsets", act: "delete", obj: "team/sets", want: false},
		{sub: ops, res: "applications", act: "sync", obj: AppObject("team", "apps-ns", "web", "argocd"), want: true},
		// The same app name in the control plane's namespace is another object.
		{sub: ops, res: "applications", act: "sync", obj: AppObject("team", "argocd", "web", "argocd"), want: false},
	})
	if got := AppObject("", "argocd", "a", "argocd"); got != "default/a" {
		t.Errorf("AppObject without a project = %q, want default/a", got)
	}
	if got := AppObject("p", "apps", "a", "argocd"); got != "p/apps/a" {
		t.Errorf("AppObject in another namespace = %q, want p/apps/a", got)
	}
}

// TestRegexMatchMode: policy.matchMode regex matches with (unanchored)
// regular expressions instead of globs.
func TestRegexMatchMode(t *testing.T) {
	e := mustEnforcer(t, map[string]string{
		"policy.matchMode": "regex",
		"policy.csv": `p, role:re, applications, (get|sync), ^team-[a-z]+/.*$, allow
p, role:re, applications, sync, ^team-x/.*$, deny
g, re, role:re
`})
	re := user("u", "re")
	runTable(t, e, []request{
		{sub: re, res: "applications", act: "sync", obj: "team-abc/app", want: true},
		{sub: re, res: "applications", act: "get", obj: "team-q/app", want: true},
		{sub: re, res: "applications", act: "sync", obj: "team-x/app", want: false},
		{sub: re, res: "applications", act: "sync", obj: "team-1/app", want: false},
		{sub: re, res: "applications", act: "delete", obj: "team-abc/app", want: false},
		// The built-in roles keep their meaning: their globs are
		// rewritten as the regular expressions matching the same strings.
		{sub: user("admin"), res: "applications", act: "update/apps/Deployment/ns/web", obj: "p/a", want: true},
		{sub: user("role:readonly"), res: "applications", act: "get", obj: "p/a", want: true},
		{sub: user("role:readonly"), res: "applications", act: "xget", obj: "p/a", want: false},
		{sub: user("role:readonly"), res: "xapplications", act: "get", obj: "p/a", want: false},
	})
}
