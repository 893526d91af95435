package notify

import (
	"strings"
	"testing"
)

func TestRenderCatalogAndHelpers(t *testing.T) {
	c := mustLoad(t, map[string]string{
		"context":              "argocdUrl: https://cd.example",
		"service.webhook.hook": "url: http://127.0.0.1:1",
		"template.custom":      "message: '{{.context.argocdUrl}}/applications/{{.app.metadata.name}} {{call .repo.RepoURLToHTTPS .app.spec.source.repoURL}} {{.app.metadata.name | upper}} to {{.recipient}} via {{.serviceType}}'\nwebhook:\n  hook: {method: POST, path: '/apps/{{.app.metadata.name}}', body: '{\"rev\": {{.app.status.sync.revision | quote}}}'}\nteams: {title: 'T {{.app.metadata.name}}'}\nchat: {title: 'C {{.app.metadata.name}}'}",
	}, nil)
	app := testApp("web", nil, succeeded("abc", "Healthy"))
	m, err := c.RenderFor("custom", app, Destination{Service: "hook", Recipient: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	// .serviceType is the destination's service name, as
	// notifications-engine sets it.
	if m.Notification.Message != "https://cd.example/applications/web https://github.com/acme/web.git WEB to ops via hook" {
		t.Errorf("message %q", m.Notification.Message)
	}
	if w := m.Notification.Webhook["hook"]; w.Method != "POST" || w.Path != "/apps/web" || w.Body != `{"rev": "abc"}` {
		t.Errorf("webhook block %+v", w)
	}
	if m.Notification.Teams == nil || m.Notification.Teams.Title != "T web" {
		t.Errorf("teams block: %+v", m.Notification.Teams)
	}
	if m.Fields["chat"]["title"] != "C web" {
		t.Errorf("a host service's block: %+v", m.Fields)
	}
	m, err = c.RenderFor("app-sync-succeeded", app, Destination{Service: "hook"})
	if err != nil || !strings.Contains(m.Notification.Message, "synced revision abc at 2026-12-01T10:00:05Z") || m.Notification.Email == nil || m.Notification.Email.Subject != "Application web synced" {
		t.Errorf("catalog template: %+v, %v", m, err)
	}
	// Several templates of one send render into one notification, each
	// over the ones before it (Argo CD's FormatNotification).
	m, err = c.RenderAll([]string{"app-sync-succeeded", "custom"}, app, Destination{Service: "hook", Recipient: "ops"})
	if err != nil || !strings.HasPrefix(m.Notification.Message, "https://cd.example/") || m.Notification.Email == nil ||
		m.Notification.Email.Subject != "Application web synced" || m.Notification.Webhook["hook"].Path != "/apps/web" || m.Template != "app-sync-succeeded,custom" {
		t.Errorf("two templates: %+v, %v", m, err)
	}
	if _, err := c.RenderFor("nope", app, Destination{}); err == nil {
		t.Error("an unknown template rendered")
	}
}

func TestEnvFunctionIsNotAvailable(t *testing.T) {
	_, err := Load(map[string]string{"template.env": "message: '{{env \"HOME\"}}'"}, nil, DefaultLoadOptions())
	if err == nil || !strings.Contains(err.Error(), `"env" not defined`) {
		t.Errorf("err = %v, want env refused: templates must not read the process's environment", err)
	}
}
