package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// tokenSecretKey is argocd-secret's server.secretkey in the project token
// tests.
var tokenSecretKey = []byte("0123456789abcdef0123456789abcdef")

// projectToken signs a token as Argo CD's API server does for "argocd proj
// role create-token" (HS256 with server.secretkey; issuer argocd, subject
// proj:<project>:<role>, jti the token's id).
func projectToken(t *testing.T, key []byte, subject, id string, iat time.Time, ttl time.Duration) string {
	t.Helper()
	c := jwt.RegisteredClaims{Issuer: "argocd", Subject: subject, ID: id, IssuedAt: jwt.NewNumericDate(iat), NotBefore: jwt.NewNumericDate(iat)}
	if ttl > 0 {
		c.ExpiresAt = jwt.NewNumericDate(iat.Add(ttl))
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tokenProjects are the projects of the project token test: team-a's ci
// role may get and sync team-a's apps, and lists one token (ci-1).
func tokenProjects(iat time.Time) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: team-a}
spec:
  sourceRepos: ["*"]
  destinations: [{server: "*", namespace: "*"}]
  roles:
    - name: ci
      description: the pipeline's deploys
      policies:
        - p, proj:team-a:ci, applications, get, team-a/*, allow
        - p, proj:team-a:ci, applications, sync, team-a/*, allow
      jwtTokens:
        - {iat: %d, id: ci-1}
---
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: team-b}
spec:
  sourceRepos: ["*"]
  destinations: [{server: "*", namespace: "*"}]
`, iat.Unix())
}

// setTokenEntries replaces the jwtTokens of team-a's ci role in the
// cluster.
func (f *fixture) setTokenEntries(ctx context.Context, entries ...map[string]any) {
	f.t.Helper()
	dyn, err := dynamic.NewForConfig(cluster.Config())
	if err != nil {
		f.t.Fatal(err)
	}
	projects := dyn.Resource(appProjectsResource).Namespace(f.ns)
	p, err := projects.Get(ctx, "team-a", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	roles, _, _ := unstructured.NestedSlice(p.Object, "spec", "roles")
	list := make([]any, len(entries))
	for i, e := range entries {
		list[i] = e
	}
	roles[0].(map[string]any)["jwtTokens"] = list
	if err := unstructured.SetNestedSlice(p.Object, roles, "spec", "roles"); err != nil {
		f.t.Fatal(err)
	}
	if _, err := projects.Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

// TestProjectTokens authenticates with Argo CD project tokens through the
// portal, with argocd-rbac-cm, argocd-secret and the AppProjects (Argo
// CD's CRD) read live from the cluster: the ci role's token lists and
// syncs team-a's app, as the role (the audit log names it and the token's
// id, never the token); it may not see team-b's app (404) nor sync it; a
// token signed with another key, expired, or not listed is refused (401).
// Then the token's entry is removed from the AppProject and, without a
// restart, the token is refused; listed again, it works again; and when
// argocd-secret's server.secretkey changes, it is refused.
func TestProjectTokens(t *testing.T) {
	iat := time.Now().Add(-time.Minute).Truncate(time.Second)
	f := newFixtureWith(t, fixtureOptions{RBACConfigMap: fixtureRBAC, Projects: tokenProjects(iat), LiveProjects: true,
		RBACNamespace: true, SecretKey: tokenSecretKey})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tok := projectToken(t, tokenSecretKey, "proj:team-a:ci", "ci-1", iat, time.Hour)

	code, out, raw := f.call("GET", "/api/v1/session", tok, "", nil)
	if code != http.StatusOK || out["user"] != "proj:team-a:ci" || out["via"] != "project-token" {
		t.Fatalf("session of the ci token: %d %s", code, raw)
	}
	if _, out, raw := f.call("GET", "/api/v1/apps", tok, "", nil); len(out["items"].([]any)) != 1 || !contains(raw, `"name":"guestbook"`) {
		t.Errorf("the ci token lists %s, want guestbook only", raw)
	}
	f.syncAndWait("guestbook", tok)
	f.syncAndWait("guestbook", tok) // the step after: a second sync
	if a := f.audit.String(); !contains(a, `"user":"proj:team-a:ci","via":"project-token","tokenId":"ci-1","action":"sync","app":"guestbook","project":"team-a"`) {
		t.Errorf("the audit log lacks the token's sync: %s", a)
	}
	// Another project's app: not found, and not synced.
	if code, _, raw := f.call("GET", "/api/v1/apps/other", tok, "", nil); code != http.StatusNotFound {
		t.Errorf("the ci token gets team-b's app: %d %s, want 404", code, raw)
	}
	if code, _, raw := f.call("POST", "/api/v1/apps/other/sync", tok, f.csrfOf(tok), map[string]any{"dryRun": true}); code != http.StatusNotFound {
		t.Errorf("the ci token syncs team-b's app: %d %s, want 404", code, raw)
	}

	for name, bad := range map[string]string{
		"another key": projectToken(t, []byte("another-key-another-key-another-k"), "proj:team-a:ci", "ci-1", iat, time.Hour),
		"expired":     projectToken(t, tokenSecretKey, "proj:team-a:ci", "ci-1", iat.Add(-2*time.Hour), time.Hour),
		"not listed":  projectToken(t, tokenSecretKey, "proj:team-a:ci", "ci-2", iat, time.Hour),
		"other role":  projectToken(t, tokenSecretKey, "proj:team-b:ci", "ci-1", iat, time.Hour),
	} {
		if code, _, raw := f.call("GET", "/api/v1/apps/guestbook", bad, "", nil); code != http.StatusUnauthorized || !contains(raw, "not honoured") {
			t.Errorf("%s: %d %s, want 401", name, code, raw)
		}
	}

	// Revoked: the entry goes from the AppProject; the next requests fail.
	csrf := f.csrfOf(tok)
	f.setTokenEntries(ctx)
	waitFor(t, 10*time.Second, "the token refused after its entry was removed", func() (bool, string) {
		code, _, raw := f.call("GET", "/api/v1/apps/guestbook", tok, "", nil)
		return code == http.StatusUnauthorized && contains(raw, "not listed in its role's jwtTokens"), raw
	})
	if code, _, raw := f.call("POST", "/api/v1/apps/guestbook/sync", tok, csrf, map[string]any{}); code != http.StatusUnauthorized {
		t.Errorf("a revoked token syncs: %d %s, want 401", code, raw)
	}
	// Listed again, it works again.
	f.setTokenEntries(ctx, map[string]any{"iat": iat.Unix(), "id": "ci-1"})
	waitFor(t, 10*time.Second, "the token honoured again", func() (bool, string) {
		code, _, raw := f.call("GET", "/api/v1/apps/guestbook", tok, "", nil)
		return code == http.StatusOK, raw
	})
	// A new server.secretkey invalidates every token signed with the old.
	sec, err := f.kube.CoreV1().Secrets(f.ns).Get(ctx, argoCDSecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sec.Data[serverSecretKey] = []byte("a-new-server-secret-key-0123456789")
	if _, err := f.kube.CoreV1().Secrets(f.ns).Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the token refused after server.secretkey changed", func() (bool, string) {
		code, _, raw := f.call("GET", "/api/v1/apps/guestbook", tok, "", nil)
		return code == http.StatusUnauthorized, raw
	})

	sig := tok[strings.LastIndex(tok, ".")+1:]
	for what, text := range map[string]string{"audit log": f.audit.String(), "portal log": f.log.String()} {
		if contains(text, sig) {
			t.Errorf("the %s holds the token", what)
		}
	}
}
