package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/rbac"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSettingsFolderMode is the settings pages over an --apps folder
// under argocd-rbac-cm: they show the engine's clusters and projects, read
// only, with one line saying why (no repository: those are a namespace's
// Secrets); a write is 409 with that line, and audited as refused.
func TestSettingsFolderMode(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{RBACConfigMap: settingsRBACCM})
	for _, page := range []string{"/settings/repositories", "/settings/clusters", "/settings/projects"} {
		code, _, raw := f.call("GET", page, tokAdmin, "", nil)
		if code != http.StatusOK || !strings.Contains(raw, `id="settings-readonly"`) || !strings.Contains(raw, "start the portal with --namespace") {
			t.Errorf("GET %s: %d, want the page with the read-only line:\n%s", page, code, raw)
		}
		if strings.Contains(raw, `class="settings-form"`) {
			t.Errorf("GET %s over a folder offers a form", page)
		}
	}
	var clusters struct {
		Items    []clusterView `json:"items"`
		ReadOnly bool          `json:"readOnly"`
	}
	code, _, raw := f.call("GET", "/api/v1/clusters", tokAdmin, "", nil)
	if err := json.Unmarshal([]byte(raw), &clusters); err != nil || code != http.StatusOK {
		t.Fatalf("GET /api/v1/clusters: %d %s", code, raw)
	}
	if !clusters.ReadOnly || len(clusters.Items) != 1 || clusters.Items[0].ID != implicitInCluster || clusters.Items[0].Update || clusters.Items[0].Delete {
		t.Errorf("the folder's clusters: %+v, want in-cluster only, read only", clusters)
	}
	var projects struct {
		Items []projectView `json:"items"`
	}
	code, _, raw = f.call("GET", "/api/v1/projects", tokReaderA, "", nil)
	if err := json.Unmarshal([]byte(raw), &projects); err != nil || code != http.StatusOK {
		t.Fatalf("GET /api/v1/projects: %d %s", code, raw)
	}
	if len(projects.Items) != 2 || projects.Items[0].Name != "team-a" || projects.Items[1].Name != "team-b" || projects.Items[0].Update {
		t.Errorf("bob's projects over the folder: %+v, want team-a and team-b, read only", projects.Items)
	}
	csrf := f.csrfOf(tokAdmin)
	for path, body := range map[string]any{
		"/api/v1/projects/team-a/update":     map[string]any{"description": "x"},
		"/api/v1/repositories":               map[string]any{"url": f.repo},
		"/api/v1/clusters/in-cluster/update": map[string]any{"name": "x"},
	} {
		code, _, raw := f.call("POST", path, tokAdmin, csrf, body)
		if code != http.StatusConflict || !strings.Contains(raw, "--namespace") {
			t.Errorf("POST %s over a folder: %d %s, want 409 saying why", path, code, raw)
		}
	}
	if a := f.audit.String(); !strings.Contains(a, `"action":"project.update"`) || !strings.Contains(a, `"outcome":"refused: Read only: this portal serves an --apps folder`) {
		t.Errorf("the refused writes are not audited: %s", a)
	}
}

// TestSettingsRefusalRedactsURL: a repository URL with a password is the
// RBAC object as Argo CD builds it, but neither the refusal, the page's
// view nor the audit record holds the password; a cluster Secret's view
// names how it authenticates, never the token.
func TestSettingsRefusalRedactsURL(t *testing.T) {
	cfg, err := rbac.Load(map[string]string{"policy.csv": "p, role:viewer, repositories, update, *, deny\ng, readers-a, role:viewer\n"})
	if err != nil {
		t.Fatal(err)
	}
	az, err := newArgoRBAC(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &server{opts: serverOptions{Authz: az}}
	bob := caller{identity: identity{User: "bob", Groups: []string{"readers-a"}}}
	const url = "https://user:pa55word-in-url@git.example.invalid/org/repo.git"
	err = s.settingsAllowed(bob, rbac.ResourceRepositories, rbac.ActionUpdate, repoRBACObject(secretTypeRepository, "team-a", url), url)
	if err == nil || strings.Contains(err.Error(), "pa55word-in-url") || !strings.Contains(err.Error(), "git.example.invalid/org/repo.git") ||
		!strings.Contains(err.Error(), "policy.csv line 1") {
		t.Errorf("refusal: %v, want the line named and the URL without its password", err)
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "r", Labels: map[string]string{engine.ClusterSecretTypeLabel: secretTypeRepository}},
		Data: map[string][]byte{"url": []byte(url), "password": []byte("pw-value-1")}}
	if b, _ := json.Marshal(repoViewOf(sec)); strings.Contains(string(b), "pa55word-in-url") || strings.Contains(string(b), "pw-value-1") || !strings.Contains(string(b), `"secrets":["password"]`) {
		t.Errorf("repository view: %s", b)
	}
	if got := repoRBACObject(secretTypeRepoCreds, "team-a", "https://h"); got != "https://h" {
		t.Errorf("a credential template's object: %q, want its URL (Argo CD's repocreds)", got)
	}
	if got := clusterRBACObject("", "https://s"); got != "https://s" {
		t.Errorf("a cluster without project: %q", got)
	}
	cl := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "c"}, Data: map[string][]byte{"server": []byte("https://s"),
		"config": []byte(`{"bearerToken":"tok-value-2","tlsClientConfig":{"keyData":"a2V5"}}`)}}
	v := clusterViewOf(cl)
	if b, _ := json.Marshal(v); strings.Contains(string(b), "tok-value-2") || v.Auth != "bearer token, TLS client certificate" || v.Name != "https://s" {
		t.Errorf("cluster view: %s", b)
	}
	cl.Data["config"] = []byte(`{"bearerToken": tok-value-2}`)
	if v := clusterViewOf(cl); v.Error == "" || strings.Contains(v.Error, "tok-value-2") {
		t.Errorf("a malformed config: %q, want an error without the value", v.Error)
	}
}
