package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func runNotifyCLI(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"notifications"}, args...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

const nd = "testdata/notifications/"

func TestNotificationsTriggerRun(t *testing.T) {
	code, out, errOut := runNotifyCLI("trigger", "run", "--config", nd+"cm.yaml", "--secret", nd+"secret.yaml", "on-sync-succeeded", nd+"app-synced.yaml")
	if code != 0 || !strings.Contains(out, "app.status.operationState.phase in ['Succeeded']  true") || !strings.Contains(out, "once per 4f2a9c1") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	// An app that never synced has no operationState: no match, and why.
	code, out, errOut = runNotifyCLI("trigger", "run", "--config", nd+"cm.yaml", "--secret", nd+"secret.yaml", "on-sync-succeeded", nd+"app-new.yaml")
	if code != 1 || !strings.Contains(out, "false") || !strings.Contains(out, "when failed") {
		t.Errorf("exit %d, want 1 with the reason\n%s%s", code, out, errOut)
	}
	// The shipped catalog under the config.
	code, out, _ = runNotifyCLI("trigger", "run", "--config", nd+"cm.yaml", "--secret", nd+"secret.yaml", "--with-catalog", "on-deployed", nd+"app-synced.yaml")
	if code != 0 || !strings.Contains(out, "app.status.health.status == 'Healthy'") {
		t.Errorf("catalog on-deployed: exit %d\n%s", code, out)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown trigger", []string{"trigger", "run", "--config", nd + "cm.yaml", "--secret", nd + "secret.yaml", "on-nothing", nd + "app-synced.yaml"}, `no trigger "on-nothing"`},
		{"missing secret", []string{"trigger", "run", "--config", nd + "cm.yaml", "on-sync-succeeded", nd + "app-synced.yaml"}, "refers to $hook-token"},
		{"not an app", []string{"trigger", "run", "--config", nd + "cm.yaml", "--secret", nd + "secret.yaml", "on-sync-succeeded", nd + "cm.yaml"}, "want Application"},
		{"usage", []string{"trigger", "run", "on-sync-succeeded"}, "usage"},
	} {
		code, out, errOut := runNotifyCLI(tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, stderr %q, want 2 and %q", tc.name, code, errOut, tc.want)
		}
		if strings.Contains(out+errOut, "s3cret") {
			t.Errorf("%s printed a secret", tc.name)
		}
	}
}

func TestNotificationsTemplateNotify(t *testing.T) {
	code, out, errOut := runNotifyCLI("template", "notify", "--config", nd+"cm.yaml", "--secret", nd+"secret.yaml", "app-sync-succeeded", nd+"app-synced.yaml")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for _, want := range []string{
		"# service hook (webhook)\nmessage:\n  web synced 4f2a9c1\nwebhook:\n  hook:\n    body: '{\"revision\": \"4f2a9c1\"}'\n    method: POST\n    path: /apps/web\n",
		"# service slack (slack)\nmessage:\n  :white_check_mark: web synced 4f2a9c1\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "s3cret") {
		t.Error("a secret was printed")
	}
	if code, _, errOut := runNotifyCLI("template", "notify", "--config", nd+"cm.yaml", "--secret", nd+"secret.yaml", "nope", nd+"app-synced.yaml"); code != 2 || !strings.Contains(errOut, `no template "nope"`) {
		t.Errorf("unknown template: exit %d %s", code, errOut)
	}
}

// A trigger that does not compile is named and left out, as Argo CD logs and
// skips it; the other triggers of the same ConfigMap still run.
func TestNotificationsSkipsABadTrigger(t *testing.T) {
	code, out, errOut := runNotifyCLI("trigger", "run", "--config", nd+"cm-bad-trigger.yaml", "--secret", nd+"secret.yaml", "on-sync-succeeded", nd+"app-synced.yaml")
	if code != 0 || !strings.Contains(out, "true") {
		t.Errorf("the good trigger: exit %d, want 0\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "warning") || !strings.Contains(errOut, "on-broken") {
		t.Errorf("stderr %q does not name the skipped trigger on-broken", errOut)
	}
	code, _, errOut = runNotifyCLI("trigger", "run", "--config", nd+"cm-bad-trigger.yaml", "--secret", nd+"secret.yaml", "on-broken", nd+"app-synced.yaml")
	if code != 2 || !strings.Contains(errOut, "on-broken") {
		t.Errorf("the skipped trigger: exit %d, stderr %q, want 2 naming it", code, errOut)
	}
}
