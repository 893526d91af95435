package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestCatalogLoads(t *testing.T) {
	c := mustLoad(t, nil, nil)
	if got := strings.Join(c.Triggers(), ","); got != strings.Join(CatalogTriggers, ",") {
		t.Errorf("triggers %s, want %v", got, CatalogTriggers)
	}
	if _, err := LoadManifests(CatalogManifest(), nil, DefaultLoadOptions()); err != nil {
		t.Errorf("the catalog manifest: %v", err)
	}
}

func TestLoadRefusesBadInputNamingIt(t *testing.T) {
	const secretValue = "s3cr3t-token-value"
	secret := map[string]string{"token": secretValue}
	for _, tc := range []struct {
		name       string
		data       map[string]string
		kind, what string
		want       string
	}{
		{"expression", map[string]string{"trigger.broken": "- when: app.status.sync.status ==\n  send: [app-created]"}, "trigger", "broken", "when"},
		{"unknown helper", map[string]string{"trigger.commits": "- when: repo.GetCommits('abc') != nil\n  send: [app-created]"}, "trigger", "commits", "GetCommits"},
		{"unknown template", map[string]string{"trigger.t": "- when: 'true'\n  send: [nope]"}, "trigger", "t", `template "nope"`},
		{"unknown condition field", map[string]string{"trigger.t": "- when: 'true'\n  send: [app-created]\n  sendTo: [x]"}, "trigger", "t", "sendTo"},
		{"template syntax", map[string]string{"template.bad": "message: '{{.app.metadata.name'"}, "template", "bad", "unclosed action"},
		{"template field type", map[string]string{"template.bad": "slack: {notifyBroadcast: [x]}"}, "template", "bad", "notifyBroadcast"},
		{"service type", map[string]string{"service.carrierpigeon": "loft: roof"}, "service", "carrierpigeon", `"carrierpigeon" is not supported`},
		{"service field type", map[string]string{"service.webhook.hook": "url: http://x/$token\nretryMax: lots"}, "service", "hook", "retryMax"},
		{"github app id", map[string]string{"service.github": "appID: first\ninstallationID: 2\nprivateKey: $token"}, "service", "github", "first"},
		{"default trigger", map[string]string{"defaultTriggers": "[on-nothing]"}, "key", "defaultTriggers", "on-nothing"},
		{"subscription service", map[string]string{"subscriptions": "- recipients: ['pager:ops']"}, "subscription", "subscriptions[0]", `service "pager"`},
		{"unknown key", map[string]string{"triggers": "x"}, "key", "triggers", "not a key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(WithCatalog(tc.data), secret, DefaultLoadOptions())
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a *ConfigError", err)
			}
			if ce.Kind != tc.kind || ce.Name != tc.what || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v (%s %q), want %s %q mentioning %q", err, ce.Kind, ce.Name, tc.kind, tc.what, tc.want)
			}
			if strings.Contains(err.Error(), secretValue) {
				t.Errorf("the error shows the secret: %v", err)
			}
		})
	}
}

func TestMissingSecretKey(t *testing.T) {
	_, err := Load(map[string]string{"service.slack": "token: $slack-token"}, map[string]string{"other": "x"}, DefaultLoadOptions())
	var missing *MissingSecretError
	if !errors.As(err, &missing) || missing.Service != "slack" || missing.Key != "slack-token" {
		t.Fatalf("err = %v, want a MissingSecretError naming slack and slack-token", err)
	}
}

func TestSecretManifestAndRedaction(t *testing.T) {
	cm := []byte(`apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-notifications-cm}
data:
  service.webhook.hook: |
    url: https://hooks.example/$path
    basicAuth: {username: bot, password: $password}
`)
	secret := []byte(`apiVersion: v1
kind: Secret
metadata: {name: argocd-notifications-secret}
data:
  password: aHVudGVyMi1wYXNzd29yZA==
stringData:
  path: t0k3n-path
`)
	recv := newReceiver(t)
	cm = []byte(strings.Replace(string(cm), "https://hooks.example", recv.URL, 1))
	c, err := LoadManifests(cm, secret, DefaultLoadOptions())
	if err != nil {
		t.Fatal(err)
	}
	to := Destination{Service: "hook"}
	if err := c.services["hook"].svc.Send(context.Background(), Message{}, to); err != nil {
		t.Fatal(c.Redact(err.Error()))
	}
	got := recv.requests()
	if u, p, _ := basicAuth(got[0].Header.Get("Authorization")); len(got) != 1 || got[0].Path != "/t0k3n-path" || u != "bot" || p != "hunter2-password" {
		t.Errorf("secrets not resolved: %d requests, path %q", len(got), c.Redact(got[0].Path))
	}
	if got := c.Redact("failed: https://hooks.example/t0k3n-path with hunter2-password"); strings.Contains(got, "t0k3n-path") || strings.Contains(got, "hunter2") {
		t.Errorf("Redact left a secret: %s", got)
	}
	if _, err := LoadManifests(cm, []byte("kind: Secret\ndata: {password: 'not base64 hunter2'}"), DefaultLoadOptions()); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a bad secret manifest: err = %v (must fail without quoting it)", err)
	}
}

func TestConfigNeverPrintsSecrets(t *testing.T) {
	c := mustLoad(t, map[string]string{
		"service.webhook.hook": "url: https://hooks.example/$path\nbasicAuth: {username: bot, password: $password}",
		"service.slack":        "token: $token",
	}, map[string]string{"path": "p4th-s3cret", "password": "pw-s3cret", "token": "xoxb-s3cret"})
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{fmt.Sprint(c), fmt.Sprintf("%v %+v %#v %s", c, c, c, c), fmt.Sprintf("%+v", *c), string(b)} {
		if strings.Contains(out, "s3cret") {
			t.Errorf("a secret printed: %s", out)
		}
	}
	if !strings.Contains(string(b), `"hook"`) {
		t.Errorf("JSON %s does not name the services", b)
	}
}

// TestIgnoredFieldsAreNamed: a field that Argo CD's service options or
// template blocks do not have is ignored, as Argo CD ignores it, and named
// (Config.Ignored); the service and the template still work.
func TestIgnoredFieldsAreNamed(t *testing.T) {
	c, err := Load(map[string]string{
		"service.webhook.hook": "url: http://127.0.0.1:1\nretries: 3",
		"template.t":           "message: hi\nslack: {color: red}\nwebhook: {hook: {method: POST, verb: GET}}\nsubject: x",
	}, nil, DefaultLoadOptions())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range c.Ignored() {
		got = append(got, e.Error())
	}
	want := []string{
		`notifications config: service "hook": field retries is not an Argo CD field; ignored`,
		`notifications config: template "t": field slack.color is not an Argo CD field; ignored`,
		`notifications config: template "t": field subject is not an Argo CD field; ignored`,
		`notifications config: template "t": field webhook.hook.verb is not an Argo CD field; ignored`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Ignored:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if m, err := c.RenderFor("t", testApp("web", nil, nil), Destination{Service: "hook"}); err != nil || m.Notification.Message != "hi" || m.Notification.Webhook["hook"].Method != "POST" {
		t.Errorf("the template without its ignored fields: %+v, %v", m, err)
	}
}
