package notify

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/internal/argodocs"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// argoCatalogs are Argo CD's catalogs, the files as Argo CD ships them:
// the current release's notifications_catalog/install.yaml, read from its
// module zip (internal/argodocs), and two older ones kept byte for byte in
// testdata/argocd (a v2.x one and one of the master branch between), which
// no release zip of the v3 module holds.
func argoCatalogs(t *testing.T) map[string]map[string]string {
	t.Helper()
	files := map[string][]byte{argodocs.Version: argodocs.ForTest(t).MustReadFile(t, "notifications_catalog/install.yaml")}
	for name, file := range map[string]string{
		"v2.3 (8b4b840)":   "testdata/argocd/notifications_catalog-install-8b4b840.yaml",
		"master (0017d06)": "testdata/argocd/notifications_catalog-install-0017d06.yaml",
	} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	out := map[string]map[string]string{}
	for name, b := range files {
		var cm corev1.ConfigMap
		if err := yaml.Unmarshal(b, &cm); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = cm.Data
	}
	if !strings.Contains(out[argodocs.Version]["trigger.on-deployed"], "time.Minute") {
		t.Fatalf("%s's on-deployed no longer uses time.Minute: the test lost what it was added for", argodocs.Version)
	}
	return out
}

// argoApps are Applications in each state the catalog's triggers look at,
// and the triggers each must fire (every other trigger must not).
func argoApps() map[string]struct {
	app   map[string]any
	fires []string
} {
	withCond := func(app map[string]any) map[string]any {
		app["status"].(map[string]any)["conditions"] = []any{
			map[string]any{"type": "ComparisonError", "message": "rpc error: repository not accessible"},
			map[string]any{"type": "SyncError", "message": "one more"},
		}
		return app
	}
	deleting := testApp("web", nil, succeeded("abc", "Healthy"))
	deleting["metadata"].(map[string]any)["deletionTimestamp"] = "2026-12-01T11:00:00Z"
	healthyBefore := testApp("web", nil, succeeded("abc", "Healthy"))
	healthyBefore["status"].(map[string]any)["health"].(map[string]any)["lastTransitionTime"] = "2026-12-01T09:00:00Z"
	running := testApp("web", nil, map[string]any{
		"sync":   map[string]any{"status": "OutOfSync", "revision": "abc"},
		"health": map[string]any{"status": "Progressing", "lastTransitionTime": "2026-12-01T10:00:01Z"},
		"operationState": map[string]any{"phase": "Running", "startedAt": "2026-12-01T10:00:00Z",
			"syncResult": map[string]any{"revision": "def"}}})
	failed := testApp("web", nil, map[string]any{
		"sync":   map[string]any{"status": "OutOfSync", "revision": "abc"},
		"health": map[string]any{"status": "Healthy", "lastTransitionTime": "2026-12-01T09:00:00Z"},
		"operationState": map[string]any{"phase": "Failed", "message": "one or more objects failed to apply",
			"startedAt": "2026-12-01T10:00:00Z", "finishedAt": "2026-12-01T10:00:05Z", "syncResult": map[string]any{"revision": "def"}}})
	unknown := testApp("web", nil, succeeded("abc", "Healthy"))
	unknown["status"].(map[string]any)["sync"].(map[string]any)["status"] = "Unknown"
	return map[string]struct {
		app   map[string]any
		fires []string
	}{
		"synced healthy": {testApp("web", nil, succeeded("abc", "Healthy")), []string{"on-created", "on-deployed", "on-sync-succeeded"}},
		"degraded":       {withCond(testApp("web", nil, succeeded("abc", "Degraded"))), []string{"on-created", "on-health-degraded", "on-sync-succeeded"}},
		"failed op":      {withCond(failed), []string{"on-created", "on-sync-failed"}},
		"running op":     {running, []string{"on-created", "on-sync-running"}},
		"unknown":        {withCond(unknown), []string{"on-created", "on-deployed", "on-sync-status-unknown", "on-sync-succeeded"}},
		"deleting":       {deleting, []string{"on-created", "on-deleted", "on-deployed", "on-sync-succeeded"}},
		"healthy before": {healthyBefore, []string{"on-created", "on-sync-succeeded"}},
	}
}

// TestArgoCDCatalogs loads Argo CD's own catalogs unchanged, evaluates
// every trigger on Applications in every state the triggers look at, and
// renders every template for every service type it has a block for.
func TestArgoCDCatalogs(t *testing.T) {
	for version, data := range argoCatalogs(t) {
		t.Run(version, func(t *testing.T) {
			data["context"] = "argocdUrl: https://cd.example"
			c, err := Load(data, nil, DefaultLoadOptions())
			if err != nil {
				t.Fatalf("Argo CD's catalog does not load: %v", err)
			}
			if got := strings.Join(c.Triggers(), ","); got != strings.Join(CatalogTriggers, ",") {
				t.Fatalf("triggers %s", got)
			}
			for state, tc := range argoApps() {
				for _, trigger := range c.Triggers() {
					want := contains(tc.fires, trigger)
					// On an app healthy since before its sync started, v2.3's
					// on-deployed fires (it does not look at the health's
					// transition), 0017d06's does not, and 3.x's does again
					// (#22204: a sync that changed nothing's health).
					if trigger == "on-deployed" && state == "healthy before" && version != "master (0017d06)" {
						want = true
					}
					tr, _ := c.Trigger(trigger)
					got := false
					for _, r := range tr.Evaluate(c.Env(tc.app)) {
						got = got || r.Matched
						if strings.HasPrefix(r.Reason, "when failed") {
							t.Errorf("%s on %s: %s", trigger, state, r.Reason)
						}
					}
					if got != want {
						t.Errorf("%s on %s: fired %v, want %v", trigger, state, got, want)
					}
				}
				renderEveryTemplate(t, c, data, state, tc.app)
			}
		})
	}
}

func renderEveryTemplate(t *testing.T, c *Config, data map[string]string, state string, app map[string]any) {
	t.Helper()
	for _, name := range sortedKeys(c.templates) {
		for _, svc := range []string{"slack", "email", "teams", "webhook"} {
			m, err := c.templates[name].Render(app, c.Context(), svc, "ops")
			if err != nil {
				t.Errorf("%s for %s on %s: %v", name, svc, state, err)
				continue
			}
			n := m.Notification
			if !strings.Contains(n.Message, "web") || n.Email == nil || !strings.Contains(n.Email.Subject, "web") {
				t.Errorf("%s for %s on %s: message %q, email %+v", name, svc, state, n.Message, n.Email)
			}
			if n.Slack != nil && n.Slack.Attachments != "" && !json.Valid([]byte(n.Slack.Attachments)) {
				t.Errorf("%s on %s: slack attachments are not JSON: %+v", name, state, n.Slack)
			}
			if n.Teams == nil || !strings.Contains(n.Teams.Title, "web") {
				t.Errorf("%s on %s: teams %+v", name, state, n.Teams)
				continue
			}
			if pa := n.Teams.PotentialAction; pa != "" && !strings.Contains(pa, "https://cd.example/applications/web") {
				t.Errorf("%s on %s: teams potentialAction %q", name, state, pa)
			}
			if pa := n.Teams.PotentialAction; strings.Contains(data["template."+name], "RepoURLToHTTPS") && !strings.Contains(strings.ReplaceAll(pa, " ", ""), `"uri":"https://github.com/acme/web.git"`) {
				t.Errorf("%s on %s: repository link %q", name, state, pa)
			}
		}
	}
}

// TestArgoCDExpressionEnvironment: every helper Argo CD's expressions and
// templates have, with Argo CD's results.
func TestArgoCDExpressionEnvironment(t *testing.T) {
	app := testApp("web", nil, succeeded("abc", "Healthy"))
	app["operation"] = map[string]any{"info": []any{map[string]any{"name": "reason", "value": "hotfix"}}}
	c := mustLoad(t, map[string]string{
		"trigger.durations": "- when: time.Nanosecond < time.Microsecond and time.Millisecond < time.Second and time.Second * 60 == time.Minute and time.Minute * 60 == time.Hour\n  send: [app-created]",
		"trigger.layouts":   "- when: time.Parse(app.status.operationState.finishedAt).Format(time.RFC1123) == 'Tue, 01 Dec 2026 10:00:05 UTC' and time.RFC3339 != time.Kitchen\n  send: [app-created]",
		"trigger.age":       "- when: time.Now().Sub(time.Parse(app.status.operationState.finishedAt)) > 5 * time.Minute\n  send: [app-created]",
		"trigger.repo":      "- when: repo.RepoURLToHTTPS(app.spec.source.repoURL) == 'https://github.com/acme/web.git' and repo.FullNameByRepoURL(app.spec.source.repoURL) == 'acme/web' and repo.QueryEscape('a b&c') == 'a+b%26c'\n  send: [app-created]",
		"trigger.strings":   "- when: strings.ToUpper(strings.ReplaceAll(app.metadata.name, 'w', 'W')) == 'WEB' and strings.ToLower('WEB') == 'web'\n  send: [app-created]",
		"trigger.sync":      "- when: sync.GetInfoItem(app, 'reason') == 'hotfix'\n  send: [app-created]",
		"template.helpers":  "message: '{{call .repo.RepoURLToHTTPS .app.spec.source.repoURL}} {{call .repo.FullNameByRepoURL .app.spec.source.repoURL}} {{call .strings.ReplaceAll \"a-b\" \"-\" \"+\"}} {{call .sync.GetInfoItem .app \"reason\"}} {{(call .time.Parse .app.status.operationState.finishedAt).Year}}'",
	}, nil)
	for _, name := range []string{"durations", "layouts", "age", "repo", "strings", "sync"} {
		if ok, why := fires(t, c, name, app); !ok {
			t.Errorf("%s: %s", name, why)
		}
	}
	m, err := c.RenderFor("helpers", app, Destination{Service: "slack"})
	if want := "https://github.com/acme/web.git acme/web a+b hotfix 2026"; err != nil || m.Notification.Message != want {
		t.Errorf("template helpers: %q, %v; want %q", m.Notification.Message, err, want)
	}
}

// TestBadTriggerIsSkipped: as Argo CD, a trigger that does not compile is
// left out and named; the rest of the ConfigMap is used.
func TestBadTriggerIsSkipped(t *testing.T) {
	data := WithCatalog(map[string]string{
		"trigger.on-broken":  "- when: app.status.sync.status ==\n  send: [app-created]",
		"trigger.on-nohelp":  "- when: repo.NoSuchHelper() == 1\n  send: [app-created]",
		"trigger.on-missing": "- when: 'true'\n  send: [no-such-template]",
		"defaultTriggers":    "[on-sync-succeeded, on-broken]",
	})
	c, err := Load(data, nil, DefaultLoadOptions())
	var skipped *SkippedError
	if !errors.As(err, &skipped) || c == nil {
		t.Fatalf("Load = %v, %v; want the config and a *SkippedError", c, err)
	}
	var names []string
	for _, e := range skipped.Entries {
		names = append(names, e.Kind+" "+e.Name)
	}
	if got := strings.Join(names, ","); got != "trigger on-broken,trigger on-missing,trigger on-nohelp" {
		t.Errorf("skipped %s", got)
	}
	if _, err := c.Trigger("on-sync-succeeded"); err != nil {
		t.Errorf("the good triggers are not there: %v", err)
	}
	if _, err := c.Trigger("on-broken"); err == nil {
		t.Error("the bad trigger is there")
	}
	if len(c.Skipped()) != 3 {
		t.Errorf("Skipped() = %v", c.Skipped())
	}
	// What is not a trigger still refuses the whole ConfigMap.
	if c, err := Load(WithCatalog(map[string]string{"trigger.on-broken": "- when: x ==\n  send: [app-created]", "service.nope": "{}"}), nil, DefaultLoadOptions()); c != nil || err == nil || errors.As(err, &skipped) {
		t.Errorf("a bad service: %v, %v; want no config", c, err)
	}
}
