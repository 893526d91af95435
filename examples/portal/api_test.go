package main

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestAPIAuthzPerRole checks every route's project-scoped authorisation:
// a reader of team-a sees and refreshes only team-a's app and cannot sync
// it; an admin of team-a syncs it but cannot see team-b's; the audit log
// names who synced.
func TestAPIAuthzPerRole(t *testing.T) {
	f := newFixture(t)

	if code, _, _ := f.call("GET", "/api/v1/apps", "", "", nil); code != http.StatusUnauthorized {
		t.Errorf("anonymous list: %d, want 401", code)
	}
	if code, _, _ := f.call("GET", "/api/v1/apps", "not-a-known-token-at-all", "", nil); code != http.StatusUnauthorized {
		t.Errorf("unknown token: %d, want 401", code)
	}
	names := func(token string) []string {
		_, out, raw := f.call("GET", "/api/v1/apps", token, "", nil)
		items, ok := out["items"].([]any)
		if !ok {
			t.Fatalf("list: %s", raw)
		}
		var n []string
		for _, it := range items {
			n = append(n, it.(map[string]any)["name"].(string))
		}
		return n
	}
	if got := strings.Join(names(tokReaderA), ","); got != "guestbook" {
		t.Errorf("reader-a sees %q, want guestbook only", got)
	}
	if got := strings.Join(names(tokAdmin), ","); got != "guestbook,other" {
		t.Errorf("admin sees %q, want both", got)
	}

	readerCSRF, adminACSRF := f.csrfOf(tokReaderA), f.csrfOf(tokAdminA)
	for _, tc := range []struct {
		who, token, csrf, method, path string
		body                           any
		want                           int
	}{
		{"reader-a", tokReaderA, "", "GET", "/api/v1/apps/guestbook", nil, http.StatusOK},
		{"reader-a", tokReaderA, "", "GET", "/api/v1/apps/other", nil, http.StatusNotFound},
		{"reader-a", tokReaderA, "", "GET", "/api/v1/apps/other/resource?key=ConfigMap+" + f.ns + "/other-config", nil, http.StatusNotFound},
		{"reader-a", tokReaderA, "", "GET", "/api/v1/apps/other/events", nil, http.StatusNotFound},
		{"reader-a", tokReaderA, "", "GET", "/api/v1/apps/other/stream", nil, http.StatusNotFound},
		{"reader-a", tokReaderA, readerCSRF, "POST", "/api/v1/apps/guestbook/refresh", map[string]any{}, http.StatusAccepted},
		{"reader-a", tokReaderA, readerCSRF, "POST", "/api/v1/apps/guestbook/sync", map[string]any{}, http.StatusForbidden},
		{"reader-a", tokReaderA, readerCSRF, "POST", "/api/v1/apps/guestbook/rollback", map[string]any{"id": 1}, http.StatusForbidden},
		{"reader-a", tokReaderA, readerCSRF, "POST", "/api/v1/apps/guestbook/terminate", map[string]any{}, http.StatusForbidden},
		{"reader-a", tokReaderA, readerCSRF, "POST", "/api/v1/apps/guestbook/action", map[string]any{"key": "apps/Deployment " + f.ns + "/guestbook", "action": "restart"}, http.StatusForbidden},
		{"admin-a", tokAdminA, adminACSRF, "POST", "/api/v1/apps/other/sync", map[string]any{}, http.StatusNotFound},
		{"admin-a", tokAdminA, adminACSRF, "POST", "/api/v1/apps/other/refresh", map[string]any{}, http.StatusNotFound},
		{"admin-a", tokAdminA, adminACSRF, "POST", "/api/v1/apps/nosuch/sync", map[string]any{}, http.StatusNotFound},
	} {
		if code, _, raw := f.call(tc.method, tc.path, tc.token, tc.csrf, tc.body); code != tc.want {
			t.Errorf("%s %s %s: %d %s, want %d", tc.who, tc.method, tc.path, code, raw, tc.want)
		}
	}
	// Refused requests are audited as refused (TestAPIRefusedAudited); none
	// may be audited as having run.
	if ran := f.ranAudits(); len(ran) > 0 {
		t.Fatalf("a refused request was audited as run: %+v", ran)
	}
	if op, _ := f.portal.engine.LastOperation(context.Background(), v1alpha1.AppKey{Name: "guestbook"}); op != nil {
		t.Fatalf("a refused sync ran: %+v", op)
	}

	f.syncAndWait("guestbook", tokAdminA)
	if a := f.audit.String(); !contains(a, `"user":"carol"`) || !contains(a, `"action":"sync"`) || !contains(a, `"outcome":"Succeeded"`) {
		t.Errorf("audit log lacks carol's sync: %s", a)
	}
	// The step after: the app stays Synced and a second sync succeeds too.
	st := f.waitStatus("guestbook", syncedHealthy)
	if st.Revision != f.first {
		t.Errorf("revision %s, want %s", st.Revision, f.first)
	}
	f.syncAndWait("guestbook", tokAdminA)
	// A read-only user cannot roll back what the admin synced.
	if code, _, _ := f.call("POST", "/api/v1/apps/guestbook/rollback", tokReaderA, readerCSRF, map[string]any{"id": 1}); code != http.StatusForbidden {
		t.Errorf("reader rollback: %d, want 403", code)
	}
	// Pages follow the same rules: a reader gets no Sync button, and no
	// page for team-b's app.
	for _, tc := range []struct {
		token, path string
		code        int
		sync        bool
	}{{tokReaderA, "/apps/guestbook", 200, false}, {tokAdminA, "/apps/guestbook", 200, true}, {tokReaderA, "/apps/other", 404, false}} {
		code, _, raw := f.call("GET", tc.path, tc.token, "", nil)
		if code != tc.code || contains(raw, `id="sync"`) != tc.sync {
			t.Errorf("page %s: %d, Sync button %v; want %d, %v", tc.path, code, contains(raw, `id="sync"`), tc.code, tc.sync)
		}
	}
	// Security headers on every answer, pages included.
	resp, err := f.http.Client().Get(f.http.URL + "/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !contains(csp, "script-src 'self'") || contains(csp, "unsafe-inline") {
		t.Errorf("CSP %q", csp)
	}
}

// TestAPICSRFRefused sends state-changing requests without the CSRF token,
// with a wrong one, and through a browser session, and checks that none
// ran.
func TestAPICSRFRefused(t *testing.T) {
	f := newFixture(t)
	body := map[string]any{"prune": true}
	for _, csrf := range []string{"", "wrong-token", f.csrfOf(tokReaderA)} {
		if code, _, raw := f.call("POST", "/api/v1/apps/guestbook/sync", tokAdmin, csrf, body); code != http.StatusForbidden || !contains(raw, "CSRF") {
			t.Errorf("sync with CSRF %q: %d %s, want 403 naming CSRF", csrf, code, raw)
		}
	}

	// A browser session: log in with the token form, then POST.
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if resp, err := c.PostForm(f.http.URL+"/login", url.Values{"token": {tokAdmin}}); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("login without its CSRF token: %v %v, want 403", resp.StatusCode, err)
	}
	resp, err := c.Get(f.http.URL + "/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	u, _ := url.Parse(f.http.URL + "/login")
	var loginCSRF string
	for _, ck := range jar.Cookies(u) {
		if ck.Name == loginCSRFCookie {
			loginCSRF = ck.Value
		}
	}
	resp, err = c.PostForm(f.http.URL+"/login", url.Values{"token": {tokAdmin}, "csrf": {loginCSRF}})
	if err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: %v %v", resp.StatusCode, err)
	}
	req, _ := http.NewRequest("POST", f.http.URL+"/api/v1/apps/guestbook/sync", strings.NewReader(`{}`))
	if resp, err = c.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("session POST without CSRF: %v %v, want 403", resp.StatusCode, err)
	}
	if op, _ := f.portal.engine.LastOperation(context.Background(), v1alpha1.AppKey{Name: "guestbook"}); op != nil || len(f.ranAudits()) > 0 {
		t.Fatalf("a sync without its CSRF token ran: %+v %s", op, f.audit.String())
	}
	// With the session's token (read from /api/v1/session) it runs.
	sreq, _ := http.NewRequest("GET", f.http.URL+"/api/v1/session", nil)
	sresp, err := c.Do(sreq)
	if err != nil {
		t.Fatal(err)
	}
	var sess struct{ CSRFToken string }
	decodeJSON(t, sresp, &sess)
	req, _ = http.NewRequest("POST", f.http.URL+"/api/v1/apps/guestbook/sync", strings.NewReader(`{"dryRun":true}`))
	req.Header.Set(csrfHeader, sess.CSRFToken)
	if resp, err = c.Do(req); err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("session POST with CSRF: %v %v, want 202", resp.StatusCode, err)
	}
	f.waitOperation("guestbook")
	if op, _ := f.portal.engine.LastOperation(context.Background(), v1alpha1.AppKey{Name: "guestbook"}); op == nil || !op.DryRun {
		t.Fatalf("dry run not recorded: %+v", op)
	}
	if st, _ := f.portal.engine.Apps().AppStatus(v1alpha1.AppKey{Name: "guestbook"}); st.Sync != appstatus.OutOfSync {
		t.Errorf("a dry run changed the app: %s", st.Sync)
	}
}

// TestAPISecretsMasked reads a Secret's live and desired manifests and its
// diff after a change by hand: masked for an admin without the secrets
// grant, clear for one with it.
func TestAPISecretsMasked(t *testing.T) {
	f := newFixture(t)
	f.syncAndWait("guestbook", tokAdmin)
	key := "Secret " + f.ns + "/guestbook-db"
	b64 := base64.StdEncoding.EncodeToString([]byte(secretValue))

	// Change the Secret by hand: the app goes OutOfSync with a diff.
	patch := `{"data":{"password":"` + base64.StdEncoding.EncodeToString([]byte("changed-by-hand")) + `"}}`
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := f.kube.CoreV1().Secrets(f.ns).Patch(ctx, "guestbook-db", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitStatus("guestbook", func(st appstatus.Status) bool { return st.Sync == appstatus.OutOfSync })

	code, out, raw := f.call("GET", "/api/v1/apps/guestbook/resource?key="+url.QueryEscape(key), tokAdmin, "", nil)
	if code != http.StatusOK {
		t.Fatalf("resource: %d %s", code, raw)
	}
	for _, leak := range []string{secretValue, b64, "changed-by-hand", base64.StdEncoding.EncodeToString([]byte("changed-by-hand"))} {
		if contains(raw, leak) {
			t.Errorf("admin without secrets sees %q in %s", leak, raw)
		}
	}
	if out["masked"] != true || !contains(out["live"].(string), secretMask) || !contains(out["desired"].(string), secretMask) {
		t.Errorf("manifests not masked: %s", raw)
	}
	if d, _ := out["diff"].(string); d == "" {
		t.Errorf("no diff for a Secret changed by hand: %s", raw)
	}
	for _, path := range []string{"/api/v1/apps/guestbook", "/api/v1/apps", "/api/v1/apps/guestbook/events"} {
		if _, _, raw := f.call("GET", path, tokAdmin, "", nil); contains(raw, secretValue) || contains(raw, b64) {
			t.Errorf("%s leaks the Secret: %s", path, raw)
		}
	}
	_, out, raw = f.call("GET", "/api/v1/apps/guestbook/resource?key="+url.QueryEscape(key), tokSecretAdmin, "", nil)
	if out["masked"] == true || !contains(out["desired"].(string), secretValue) {
		t.Errorf("the secrets role does not see the desired value: %s", raw)
	}
	// Syncing again heals the Secret; the next refresh says Synced.
	f.syncAndWait("guestbook", tokAdmin)
	s, err := f.kube.CoreV1().Secrets(f.ns).Get(ctx, "guestbook-db", metav1.GetOptions{})
	if err != nil || string(s.Data["password"]) != secretValue {
		t.Fatalf("secret not healed: %v", err)
	}
}

func decodeJSON(t *testing.T, resp *http.Response, v any) {
	t.Helper()
	defer resp.Body.Close()
	if err := jsonDecode(resp, v); err != nil {
		t.Fatal(err)
	}
}
