package main

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// fixtureRBAC is the argocd-rbac-cm of the RBAC tests, for the fixture's
// users: alice (platform), bob (readers-a), carol (admins-a), erin
// (platform and freeze-a).
//   - policy.default gives everyone get on team-a's apps (bob has only it);
//   - platform deploys everywhere and reads logs, but a deny line takes
//     sync on team-b away;
//   - admins-a may restart team-a's Deployments and nothing more;
//   - freeze-a may not sync team-a's apps (a deny, nothing allowed).
const fixtureRBAC = `apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-rbac-cm}
data:
  policy.default: role:viewer-a
  policy.csv: |
    p, role:viewer-a, applications, get, team-a/*, allow
    p, role:deployer, applications, *, */*, allow
    p, role:deployer, applications, sync, team-b/*, deny
    p, role:deployer, logs, get, */*, allow
    g, platform, role:deployer
    p, role:operator-a, applications, action/apps/Deployment/restart, team-a/*, allow
    g, admins-a, role:operator-a
    p, role:freeze-a, applications, sync, team-a/*, deny
    g, freeze-a, role:freeze-a
`

// fixtureRBACProjects give team-b a project role for readers-a: get and
// sync of team-b's apps.
const fixtureRBACProjects = `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: team-a}
spec:
  sourceRepos: ["*"]
  destinations: [{server: "*", namespace: "*"}]
---
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: team-b}
spec:
  sourceRepos: ["*"]
  destinations: [{server: "*", namespace: "*"}]
  roles:
    - name: deployer
      groups: [readers-a]
      policies:
        - p, proj:team-b:deployer, applications, get, team-b/*, allow
        - p, proj:team-b:deployer, applications, sync, team-b/*, allow
`

// TestRBACRoutes authorises every route with argocd-rbac-cm on the local
// cluster: deny beats allow, policy.default applies to everyone, a project
// role's group gets its rights, rollback and terminate need sync, a
// resource action needs its action/<group>/<kind>/<name>, the list shows
// only what the caller may get, and the UI shows a Sync button and logs
// only where the role has them.
func TestRBACRoutes(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{RBACConfigMap: fixtureRBAC, Projects: fixtureRBACProjects})
	names := func(token string) string {
		_, out, raw := f.call("GET", "/api/v1/apps", token, "", nil)
		items, ok := out["items"].([]any)
		if !ok {
			t.Fatalf("list: %s", raw)
		}
		var n []string
		for _, it := range items {
			n = append(n, it.(map[string]any)["name"].(string))
		}
		return strings.Join(n, ",")
	}
	if got := names(tokAdminA); got != "guestbook" {
		t.Errorf("carol (policy.default only gets team-a) lists %q, want guestbook", got)
	}
	for _, tok := range []string{tokAdmin, tokReaderA} {
		if got := names(tok); got != "guestbook,other" {
			t.Errorf("list as %s: %q, want guestbook,other", tok[:8], got)
		}
	}
	if code, _, raw := f.call("GET", "/api/v1/apps/guestbook", tokSecretAdmin, "", nil); code != http.StatusOK {
		t.Errorf("dave (policy.default) get guestbook: %d %s", code, raw)
	}

	aliceCSRF, bobCSRF, carolCSRF := f.csrfOf(tokAdmin), f.csrfOf(tokReaderA), f.csrfOf(tokAdminA)
	restart := map[string]any{"key": "apps/Deployment " + f.ns + "/guestbook", "action": "restart"}
	dry := map[string]any{"dryRun": true}
	for _, tc := range []struct {
		why, token, csrf, method, path string
		body                           any
		want                           int
	}{
		{"deny beats allow: platform may not sync team-b", tokAdmin, aliceCSRF, "POST", "/api/v1/apps/other/sync", dry, http.StatusForbidden},
		{"rollback needs sync", tokAdmin, aliceCSRF, "POST", "/api/v1/apps/other/rollback", map[string]any{"id": 1}, http.StatusForbidden},
		{"terminate needs sync", tokAdmin, aliceCSRF, "POST", "/api/v1/apps/other/terminate", map[string]any{}, http.StatusForbidden},
		{"the deny is about sync only", tokAdmin, aliceCSRF, "GET", "/api/v1/apps/other", nil, http.StatusOK},
		{"policy.default: get", tokAdminA, "", "GET", "/api/v1/apps/guestbook", nil, http.StatusOK},
		{"policy.default: refresh needs get", tokAdminA, carolCSRF, "POST", "/api/v1/apps/guestbook/refresh", map[string]any{}, http.StatusAccepted},
		{"no get: not found", tokAdminA, "", "GET", "/api/v1/apps/other", nil, http.StatusNotFound},
		{"no get: no resource", tokAdminA, "", "GET", "/api/v1/apps/other/resource?key=ConfigMap+" + f.ns + "/other-config", nil, http.StatusNotFound},
		{"no get: no refresh", tokAdminA, carolCSRF, "POST", "/api/v1/apps/other/refresh", map[string]any{}, http.StatusNotFound},
		{"no sync: 403", tokAdminA, carolCSRF, "POST", "/api/v1/apps/guestbook/sync", dry, http.StatusForbidden},
		{"no sync: no rollback", tokAdminA, carolCSRF, "POST", "/api/v1/apps/guestbook/rollback", map[string]any{"id": 1}, http.StatusForbidden},
		{"no action/apps/Deployment/scale", tokAdminA, carolCSRF, "POST", "/api/v1/apps/guestbook/action", map[string]any{"key": restart["key"], "action": "scale"}, http.StatusForbidden},
		{"policy.default has no actions", tokReaderA, bobCSRF, "POST", "/api/v1/apps/guestbook/action", restart, http.StatusForbidden},
		{"policy.default has no sync", tokReaderA, bobCSRF, "POST", "/api/v1/apps/guestbook/sync", dry, http.StatusForbidden},
		{"project role's group: get", tokReaderA, "", "GET", "/api/v1/apps/other", nil, http.StatusOK},
		{"project role's group: sync", tokReaderA, bobCSRF, "POST", "/api/v1/apps/other/sync", dry, http.StatusAccepted},
	} {
		if code, _, raw := f.call(tc.method, tc.path, tc.token, tc.csrf, tc.body); code != tc.want {
			t.Errorf("%s: %s %s: %d %s, want %d", tc.why, tc.method, tc.path, code, raw, tc.want)
		}
	}
	f.waitOperation("other")
	if op, _ := f.portal.engine.LastOperation(context.Background(), v1alpha1.AppKey{Name: "other"}); op == nil || !op.DryRun {
		t.Errorf("bob's dry run through the project role did not run: %+v", op)
	}
	if op, _ := f.portal.engine.LastOperation(context.Background(), v1alpha1.AppKey{Name: "guestbook"}); op != nil {
		t.Fatalf("a refused sync of guestbook ran: %+v", op)
	}
	if a := f.audit.String(); !contains(a, `"outcome":"refused: application other: permission denied: applications, sync, team-b/other: `+
		`role:viewer-a (policy.default): no line matched; alice: no line matched; `+
		`platform: denied by policy.csv line 3 \"p, role:deployer, applications, sync, team-b/*, deny\""`) {
		t.Errorf("the audit log does not name the missing permission: %s", a)
	}
	// carol's restart passes authorisation (the engine answers, not RBAC).
	if code, _, raw := f.call("POST", "/api/v1/apps/guestbook/action", tokAdminA, carolCSRF, restart); code == http.StatusForbidden || code == http.StatusNotFound {
		t.Errorf("carol's restart: %d %s, want it past RBAC", code, raw)
	}

	// Alice syncs team-a (allowed); the next refresh says Synced, and
	// a second sync succeeds too.
	f.syncAndWait("guestbook", tokAdmin)
	f.syncAndWait("guestbook", tokAdmin)

	// What the UI gets: per-app permissions, and the page's buttons.
	for _, tc := range []struct {
		token, app              string
		get, sync, logs, button bool
	}{
		{tokAdmin, "guestbook", true, true, true, true},
		{tokAdmin, "other", true, false, true, false},
		{tokAdminA, "guestbook", true, false, false, false},
		{tokReaderA, "other", true, true, false, true},
	} {
		code, out, raw := f.call("GET", "/api/v1/apps/"+tc.app+"/permissions", tc.token, "", nil)
		if code != http.StatusOK || out["get"] != tc.get || out["sync"] != tc.sync || out["logs"] != tc.logs || out["secrets"] != false {
			t.Errorf("permissions of %s on %s: %d %s, want get %v sync %v logs %v", tc.token[:8], tc.app, code, raw, tc.get, tc.sync, tc.logs)
		}
		_, _, page := f.call("GET", "/apps/"+tc.app, tc.token, "", nil)
		if contains(page, `id="sync"`) != tc.button || contains(page, `class="rollback"`) && !tc.button {
			t.Errorf("page %s as %s: Sync button %v, want %v", tc.app, tc.token[:8], contains(page, `id="sync"`), tc.button)
		}
	}
	if code, _, _ := f.call("GET", "/api/v1/apps/other/permissions", tokAdminA, "", nil); code != http.StatusNotFound {
		t.Errorf("permissions of an app carol may not get: %d, want 404", code)
	}
}

// TestRBACOIDCGroups logs in through an in-process OIDC issuer with
// --rbac-cm: a group of the ID token's groups claim gets the role a g line
// binds it to; the user (her email) is a subject of its own; and with
// scopes naming another claim the groups claim gives nothing.
func TestRBACOIDCGroups(t *testing.T) {
	const cm = `apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-rbac-cm}
data:
  scopes: '[groups]'
  policy.csv: |
    p, role:deployer, applications, *, team-a/*, allow
    g, sso:platform, role:deployer
    p, role:auditor, logs, get, */*, allow
    p, role:auditor, applications, get, */*, allow
    g, erin@example.com, role:auditor
`
	for _, tc := range []struct {
		cm        string
		groups    []string
		get, sync bool
	}{
		{cm, []string{"sso:platform", "staff"}, true, true},
		{cm, []string{"staff"}, true, false}, // her own name: the auditor
		{strings.Replace(cm, "[groups]", "[teams]", 1), []string{"sso:platform"}, true, false},
	} {
		perms, groups := oidcPermissions(t, tc.cm, tc.groups)
		if perms["get"] != tc.get || perms["sync"] != tc.sync || perms["logs"] != true {
			t.Errorf("groups %v (session groups %v): %v, want get %v sync %v logs true", tc.groups, groups, perms, tc.get, tc.sync)
		}
	}
	const noName = `apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-rbac-cm}
data:
  policy.csv: |
    p, role:deployer, applications, *, team-a/*, allow
    g, sso:platform, role:deployer
`
	if perms, _ := oidcPermissions(t, noName, []string{"sso:platform"}); perms["sync"] != true {
		t.Errorf("default scopes [groups]: %v, want sync through sso:platform", perms)
	}
	if perms, groups := oidcPermissions(t, noName, []string{"staff"}); perms != nil {
		t.Errorf("groups %v bound to nothing: %v, want the app not found", groups, perms)
	}
}

// oidcPermissions logs erin in through a test issuer giving groups, with
// the portal authorising with cm, and returns her permissions on a team-a
// app (nil when she may not get it) and her session's groups.
func oidcPermissions(t *testing.T, cm string, groups []string) (map[string]any, []string) {
	t.Helper()
	is := newTestIssuer(t, groups...)
	file := filepath.Join(t.TempDir(), "argocd-rbac-cm.yaml")
	if err := os.WriteFile(file, []byte(cm), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadRBACConfigMap(file)
	if err != nil {
		t.Fatal(err)
	}
	az, err := newArgoRBAC(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ps := httptest.NewUnstartedServer(nil)
	portalURL := "http://" + ps.Listener.Addr().String()
	o, err := newOIDCLogin(context.Background(), oidcOptions{Issuer: is.URL, ClientID: "portal",
		RedirectURL: portalURL + "/oidc/callback", Scopes: cfg.Scopes})
	if err != nil {
		t.Fatal(err)
	}
	apps, err := loadAppsText("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web}\n" +
		"spec: {project: team-a, source: {repoURL: https://example.com/r.git, path: p}, destination: {server: https://kubernetes.default.svc, namespace: web}}\n")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := newServer(serverOptions{Authz: az, OIDC: o, Tokens: tokenFile{}, Apps: apps})
	if err != nil {
		t.Fatal(err)
	}
	ps.Config.Handler = srv
	ps.Start()
	defer ps.Close()
	jar, _ := cookiejar.New(nil)
	// Stop at the list page the login lands on: this server has no engine.
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		if r.URL.String() == portalURL+"/" {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	resp, err := c.Get(portalURL + "/login/oidc")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = c.Get(portalURL + "/api/v1/session")
	if err != nil {
		t.Fatal(err)
	}
	var sess struct {
		User   string
		Groups []string
	}
	decodeJSON(t, resp, &sess)
	want := groups
	if !slices.Contains(cfg.Scopes, "groups") {
		want = nil
	}
	if sess.User != "erin@example.com" || !slices.Equal(sess.Groups, want) {
		t.Fatalf("session %+v: want erin with groups %v (scopes %v)", sess, want, cfg.Scopes)
	}
	resp, err = c.Get(portalURL + "/api/v1/apps/web/permissions")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode == http.StatusNotFound {
		resp.Body.Close()
		return nil, sess.Groups
	}
	var perms map[string]any
	decodeJSON(t, resp, &perms)
	return perms, sess.Groups
}

// loadAppsText reads Applications from YAML text.
func loadAppsText(text string) ([]*gitops.Application, error) {
	list, err := gitops.LoadApplications(strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	out := make([]*gitops.Application, len(list))
	for i := range list {
		out[i] = &list[i]
	}
	return out, nil
}
