package notify

import (
	"os"
	"strings"
	"testing"
)

// fires reports whether any condition of trigger matched, and the reasons.
func fires(t *testing.T, c *Config, trigger string, app map[string]any) (bool, string) {
	t.Helper()
	tr, err := c.Trigger(trigger)
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	matched := false
	for _, r := range tr.Evaluate(NewEnv(app)) {
		matched = matched || r.Matched
		reasons = append(reasons, r.Reason)
	}
	return matched, strings.Join(reasons, "; ")
}

func TestCatalogTriggers(t *testing.T) {
	c := mustLoad(t, nil, nil)
	fresh := testApp("web", nil, map[string]any{"sync": map[string]any{"status": "OutOfSync"}, "health": map[string]any{"status": "Missing"}})
	deleting := testApp("web", nil, nil)
	deleting["metadata"].(map[string]any)["deletionTimestamp"] = "2026-12-01T10:00:00Z"
	running := testApp("web", nil, map[string]any{"operationState": map[string]any{"phase": "Running", "startedAt": "2026-12-01T10:00:00Z"}})
	failed := testApp("web", nil, map[string]any{"operationState": map[string]any{"phase": "Error", "syncResult": map[string]any{"revision": "abc"}}})
	unknown := testApp("web", nil, map[string]any{"sync": map[string]any{"status": "Unknown"}})
	degraded := testApp("web", nil, map[string]any{"health": map[string]any{"status": "Degraded"}})
	// Healthy since before the sync finished: a resync, not a deployment.
	healthyBefore := testApp("web", nil, succeeded("abc", "Healthy"))
	healthyBefore["status"].(map[string]any)["health"].(map[string]any)["lastTransitionTime"] = "2026-12-01T09:00:00Z"
	for _, tc := range []struct {
		trigger string
		yes     []map[string]any
		no      []map[string]any
	}{
		{"on-created", []map[string]any{fresh}, nil},
		{"on-deleted", []map[string]any{deleting}, []map[string]any{fresh}},
		{"on-deployed", []map[string]any{testApp("web", nil, succeeded("abc", "Healthy"))}, []map[string]any{testApp("web", nil, succeeded("abc", "Progressing")), running, healthyBefore}},
		{"on-health-degraded", []map[string]any{degraded}, []map[string]any{fresh}},
		{"on-sync-failed", []map[string]any{failed}, []map[string]any{running, testApp("web", nil, succeeded("abc", "Healthy"))}},
		{"on-sync-running", []map[string]any{running}, []map[string]any{failed}},
		{"on-sync-status-unknown", []map[string]any{unknown}, []map[string]any{fresh}},
		{"on-sync-succeeded", []map[string]any{testApp("web", nil, succeeded("abc", "Degraded"))}, []map[string]any{failed, running}},
	} {
		for i, app := range tc.yes {
			if ok, why := fires(t, c, tc.trigger, app); !ok {
				t.Errorf("%s: case %d does not fire: %s", tc.trigger, i, why)
			}
		}
		for i, app := range tc.no {
			if ok, _ := fires(t, c, tc.trigger, app); ok {
				t.Errorf("%s: negative case %d fires", tc.trigger, i)
			}
		}
	}
}

func TestNilSafeAndBoundedEvaluation(t *testing.T) {
	c := mustLoad(t, map[string]string{
		"trigger.deep":    "- when: app.status.operationState.syncResult.resources[0].status == 'Synced'\n  send: [app-created]",
		"trigger.string":  "- when: app.metadata.name\n  send: [app-created]",
		"trigger.huge":    "- when: 'len(map(1..100000000, # * 2)) > 0'\n  send: [app-created]",
		"trigger.timeish": "- when: time.Now().Sub(time.Parse(app.status.operationState.finishedAt)).Hours() > 1\n  send: [app-created]",
		"trigger.badtime": "- when: time.Now().Sub(time.Parse('yesterday')).Hours() > 1\n  send: [app-created]",
	}, nil)
	bare := testApp("web", nil, nil) // no status at all: every status path is nil
	for trigger, want := range map[string]string{
		"deep": "when failed", "string": "not a boolean", "huge": "memory budget", "badtime": "when failed", "timeish": "when failed",
	} {
		ok, why := fires(t, c, trigger, bare)
		if ok || !strings.Contains(why, want) {
			t.Errorf("%s on a bare app: fired %v, reason %q, want no with %q", trigger, ok, why, want)
		}
	}
	if ok, why := fires(t, c, "timeish", testApp("web", nil, succeeded("abc", "Healthy"))); ok != true {
		t.Errorf("timeish: an operation finished in 2026-12-01T10:00Z is over an hour old: %s", why)
	}
}

func TestOncePerValue(t *testing.T) {
	c := mustLoad(t, nil, nil)
	tr, _ := c.Trigger("on-deployed")
	r := tr.Evaluate(NewEnv(testApp("web", nil, succeeded("abc123", "Healthy"))))
	if !r[0].Matched || r[0].OncePer != "abc123" {
		t.Errorf("on-deployed: %+v, want a match once per abc123", r[0])
	}
}

func TestRepoHelpers(t *testing.T) {
	// Argo CD's results (its repo_test.go): https, no user, the rest kept.
	var r RepoFuncs
	for in, want := range map[string]string{
		"git@github.com:acme/web.git":       "https://github.com/acme/web.git",
		"ssh://git@gitlab.example/a/b.git":  "https://gitlab.example/a/b.git",
		"https://github.com/acme/web.git":   "https://github.com/acme/web.git",
		"http://user@git.internal:8080/x/y": "https://git.internal:8080/x/y",
	} {
		if got, err := r.RepoURLToHTTPS(in); err != nil || got != want {
			t.Errorf("RepoURLToHTTPS(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"git@github.com:acme/web.git":                     "acme/web",
		"https://user@bitbucket.org/argoproj/argo-cd.git": "argoproj/argo-cd",
		"http://github.com/argoproj/argo-cd":              "argoproj/argo-cd",
		"https://gitlab.com/group/sub/project.git":        "group/sub",
	} {
		if got, err := r.FullNameByRepoURL(in); err != nil || got != want {
			t.Errorf("FullNameByRepoURL(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
	if _, err := r.RepoURLToHTTPS("not a url"); err == nil {
		t.Error("RepoURLToHTTPS of a URL without a host: no error")
	}
}

// Argo CD's catalog layout loads, and each of its triggers agrees with the
// shipped catalog on whether it fires, for apps in every state the
// triggers look at.
func TestArgoCatalogFormatAgreesWithCatalog(t *testing.T) {
	b, err := os.ReadFile("testdata/argo-catalog-format.yaml")
	if err != nil {
		t.Fatal(err)
	}
	argo, err := LoadManifests(b, nil, DefaultLoadOptions())
	if err != nil {
		t.Fatal(err)
	}
	ours := mustLoad(t, nil, nil)
	deleting := testApp("web", nil, succeeded("abc", "Healthy"))
	deleting["metadata"].(map[string]any)["deletionTimestamp"] = "2026-12-01T11:00:00Z"
	healthyBefore := testApp("web", nil, succeeded("abc", "Healthy"))
	healthyBefore["status"].(map[string]any)["health"].(map[string]any)["lastTransitionTime"] = "2026-12-01T09:00:00Z"
	apps := map[string]map[string]any{
		"new":            testApp("web", nil, nil),
		"deleting":       deleting,
		"deployed":       testApp("web", nil, succeeded("abc", "Healthy")),
		"healthy-before": healthyBefore,
		"progressing":    testApp("web", nil, succeeded("abc", "Progressing")),
		"degraded":       testApp("web", nil, succeeded("abc", "Degraded")),
		"running":        testApp("web", nil, map[string]any{"operationState": map[string]any{"phase": "Running", "startedAt": "2026-12-01T10:00:00Z", "syncResult": map[string]any{"revision": "abc"}}}),
		"failed":         testApp("web", nil, map[string]any{"operationState": map[string]any{"phase": "Failed", "syncResult": map[string]any{"revision": "abc"}}}),
		"error":          testApp("web", nil, map[string]any{"operationState": map[string]any{"phase": "Error"}}),
		"unknown":        testApp("web", nil, map[string]any{"sync": map[string]any{"status": "Unknown"}, "health": map[string]any{"status": "Unknown"}}),
	}
	fired := 0
	for _, trigger := range CatalogTriggers {
		for name, app := range apps {
			a, whyA := fires(t, argo, trigger, app)
			o, whyO := fires(t, ours, trigger, app)
			if a != o {
				t.Errorf("%s on %s: Argo CD's layout %v (%s), ours %v (%s)", trigger, name, a, whyA, o, whyO)
			}
			if a {
				fired++
			}
		}
		for _, tmpl := range []string{"app-" + strings.TrimPrefix(trigger, "on-")} {
			if _, err := argo.RenderFor(tmpl, apps["deployed"], Destination{Service: "slack"}); err != nil {
				t.Errorf("render %s: %v", tmpl, err)
			}
		}
	}
	if fired < 10 {
		t.Errorf("only %d (trigger, app) pairs fired: the table does not exercise the triggers", fired)
	}
}
