package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
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
