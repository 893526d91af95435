package notify

import (
	"fmt"
	"strings"
	"testing"
)

func TestSubscriptionForms(t *testing.T) {
	c := mustLoad(t, map[string]string{
		"service.webhook.hook":  "url: http://127.0.0.1:1",
		"service.slack":         "token: x",
		"defaultTriggers":       "[on-sync-status-unknown]",
		"defaultTriggers.slack": "[on-sync-failed, on-health-degraded]",
		"subscriptions":         "- recipients: ['slack:team-web']\n  triggers: [on-deployed]\n  selector: team=web\n- recipients: ['hook:']",
	}, nil)
	app := testApp("web", map[string]any{
		"notifications.argoproj.io/subscribe.on-sync-succeeded.slack": "a; b",
		"notifications.argoproj.io/subscribe.slack":                   "c",
		"notifications.argoproj.io/subscriptions":                     "- trigger: [on-created]\n  destinations: [{service: hook}]",
		"unrelated": "x",
	}, nil)
	app["metadata"].(map[string]any)["labels"] = map[string]any{"team": "web"}
	subs, err := c.Subscriptions(app)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for trig, ds := range subs {
		got[trig] = fmt.Sprint(ds)
	}
	want := map[string]string{
		"on-sync-succeeded":      "[slack:a slack:b]",
		"on-sync-failed":         "[slack:c]",
		"on-health-degraded":     "[slack:c]",
		"on-created":             "[hook:]",
		"on-deployed":            "[slack:team-web]",
		"on-sync-status-unknown": "[hook:]",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("subscriptions\n got %v\nwant %v", got, want)
	}
	delete(app["metadata"].(map[string]any), "labels")
	if subs, _ := c.Subscriptions(app); subs["on-deployed"] != nil {
		t.Error("the selector did not filter")
	}
	bad := testApp("web", map[string]any{"notifications.argoproj.io/subscribe.on-nothing.slack": "a", "notifications.argoproj.io/subscribe.on-created.pager": "x"}, nil)
	if _, err := c.Subscriptions(bad); err == nil || !strings.Contains(err.Error(), `trigger "on-nothing"`) || !strings.Contains(err.Error(), `service "pager"`) {
		t.Errorf("err = %v, want the unknown trigger and service named", err)
	}
}
