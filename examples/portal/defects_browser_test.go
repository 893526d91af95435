package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/kubegitops/gitops/appstatus"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// auditOutcomes are the outcomes the audit log records for action on
// app, in order.
func (f *fixture) auditOutcomes(action, app string) []string {
	f.t.Helper()
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(f.audit.String()), "\n") {
		var rec auditRecord
		if line == "" || json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if rec.Action == action && rec.App == app {
			out = append(out, rec.Outcome)
		}
	}
	return out
}

// denyWindowProjects are the fixture's projects with a deny window on
// team-b (manualSync: false) that opened 10 minutes before began and lasts
// an hour.
func denyWindowProjects(began time.Time) string {
	return fixtureProjects + fmt.Sprintf(`  syncWindows:
    - {kind: deny, schedule: "%d %d * * *", duration: 1h, applications: ["*"], manualSync: false}
`, began.Minute(), began.Hour())
}

// TestBulkSyncWindowBrowser: with a deny window (manualSync: false) on
// team-b, "Sync selected" over guestbook (team-a) and other (team-b)
// reports guestbook started and other refused by the window, on the page
// and in the API's answer, and audits other once, refused; other is never
// synced while guestbook is. Other's page says when syncs are allowed
// again, not that the deny window "opens" then, and a single sync of
// other is refused at once (403), as Argo CD's API refuses it.
func TestBulkSyncWindowBrowser(t *testing.T) {
	began := time.Now().UTC().Add(-10 * time.Minute).Truncate(time.Minute)
	f := newFixtureWith(t, fixtureOptions{Projects: denyWindowProjects(began)})
	f.waitStatus("other", func(st appstatus.Status) bool { return st.Sync == appstatus.OutOfSync })
	ctx, run0 := newBrowser(t, 5*time.Minute)
	loginAs(run0, f.http.URL, tokAdmin)
	run := within(t, ctx, time.Minute)
	var started, refused string
	run("bulk sync", clickNow("#select-all"), clickNow("#bulk-sync"), textNow("#bulk-started", &started),
		into(&refused, chromedp.Evaluate[string](`(document.querySelector('#bulk-refused li[data-app="other"]') || {}).textContent || ""`)))
	if !strings.Contains(started, "guestbook") || strings.Contains(started, "other") {
		t.Errorf("the page says %q, want guestbook started and not other", started)
	}
	if !strings.Contains(refused, "blocked") || !strings.Contains(refused, "deny") {
		t.Errorf("other's refusal on the page: %q, want the deny window", refused)
	}
	if got := f.auditOutcomes("sync", "other"); len(got) != 1 || !strings.HasPrefix(got[0], refusedPrefix+"sync of other blocked") {
		t.Errorf("other's audited syncs: %q, want one refusal by the window", got)
	}
	code, out, raw := f.call("POST", "/api/v1/sync", tokAdmin, f.csrfOf(tokAdmin), map[string]any{"apps": []string{"other"}})
	if code != http.StatusAccepted || len(out["started"].([]any)) != 0 || !strings.Contains(raw, `"app":"other"`) {
		t.Errorf("bulk sync of other through the API: %d %s, want it refused", code, raw)
	}
	code, _, raw = f.call("POST", "/api/v1/apps/other/sync", tokAdmin, f.csrfOf(tokAdmin), map[string]any{})
	if code != http.StatusForbidden || !strings.Contains(raw, "blocked") {
		t.Errorf("sync of other: %d %s, want 403 blocked by the window", code, raw)
	}

	// The step after: guestbook synced, other never.
	f.waitOperation("guestbook")
	f.waitStatus("guestbook", syncedHealthy)
	lctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if op, err := f.portal.engine.LastOperation(lctx, v1alpha1.AppKey{Name: "other"}); err != nil || op != nil {
		t.Errorf("other's last operation: %+v, %v; want none", op, err)
	}
	var note string
	run("other's page", chromedp.Navigate(f.http.URL+"/apps/other"), textNow("#sync-window", &note))
	again := began.Add(time.Hour).Format("2006-01-02 15:04Z")
	if strings.Contains(note, "opens at") || !strings.Contains(note, "allowed again at "+again) {
		t.Errorf("other's window note %q, want it to say syncs are allowed again at %s", note, again)
	}
}

// s14Projects add two projects to the fixture's: s14 allows only
// namespaces s14-* of the in-cluster server, by-server allows any
// namespace of that server, named by its URL only.
const s14Projects = fixtureProjects + `---
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: s14}
spec:
  sourceRepos: ["*"]
  destinations: [{server: "https://kubernetes.default.svc", namespace: "s14-*"}]
---
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: by-server}
spec:
  sourceRepos: ["*"]
  destinations: [{server: "https://kubernetes.default.svc", namespace: "*"}]
`

// fillCreate fills the create dialog.
func fillCreate(name, project, repo, path, cluster, namespace string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(clickNow("#new-app"), chromedp.WaitVisible(chromedp.CSS("#create-dialog")),
		typeNow("#create-name", name), typeNow("#create-project", project), typeNow("#create-repo", repo),
		typeNow("#create-path", path), typeNow("#create-cluster", cluster), typeNow("#create-namespace", namespace))
}

// TestCreateDestinationBrowser creates apps from the list's dialog: one in
// kube-system for project s14 (only s14-* allowed) is refused at create,
// as Argo CD refuses it, with the project's rule named in the dialog and
// the audit log, and no row; one whose cluster is given by the name the
// dialog offers (in-cluster) for a project that allows that cluster's
// server is created and syncs (Argo CD resolves the name first).
func TestCreateDestinationBrowser(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{Projects: s14Projects})
	ctx, run0 := newBrowser(t, 5*time.Minute)
	loginAs(run0, f.http.URL, tokAdmin)
	run := within(t, ctx, time.Minute)
	var offered []string
	var msg string
	run("refused", into(&offered, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#create-clusters option")).map(o => o.value)`)),
		fillCreate("kube-sys-app", "s14", f.repo, "other", v1alpha1.KubernetesInClusterName, "kube-system"),
		clickNow("#create-go"),
		chromedp.Poll[chromedp.Void](`document.querySelector("#create-error").textContent !== ""`),
		textNow("#create-error", &msg))
	if len(offered) != 1 || offered[0] != v1alpha1.KubernetesInClusterName {
		t.Errorf("the dialog offers clusters %q, want [in-cluster]", offered)
	}
	if !strings.Contains(msg, "destinations") || !strings.Contains(msg, "kube-system") {
		t.Errorf("create in kube-system says %q, want the project's destinations named", msg)
	}
	if code, _, raw := f.call("GET", "/api/v1/apps/kube-sys-app", tokAdmin, "", nil); code != http.StatusNotFound {
		t.Errorf("the refused app: %d %s, want 404", code, raw)
	}
	if got := f.auditOutcomes("create", "kube-sys-app"); len(got) != 1 || !strings.Contains(got[0], refusedPrefix) {
		t.Errorf("audited creates of kube-sys-app: %q, want one refusal", got)
	}
	code, _, raw := f.call("POST", "/api/v1/apps", tokAdmin, f.csrfOf(tokAdmin), map[string]any{"name": "by-url", "project": "s14",
		"repoURL": f.repo, "path": "other", "cluster": v1alpha1.KubernetesInternalAPIServerAddr, "namespace": "kube-system"})
	if code != http.StatusBadRequest || !strings.Contains(raw, "destinations") {
		t.Errorf("create by server URL in kube-system: %d %s, want 400", code, raw)
	}

	run("by name", clickNow("#create-cancel"),
		fillCreate("by-name", "by-server", f.repo, "other", v1alpha1.KubernetesInClusterName, f.ns),
		clickNow("#create-go"), chromedp.WaitVisible(chromedp.CSS(`tr[data-app="by-name"]`)))
	f.waitStatus("by-name", func(st appstatus.Status) bool { return st.Sync == appstatus.OutOfSync })
	run("sync by-name", chromedp.Navigate(f.http.URL+"/apps/by-name"), clickNow("#sync"),
		chromedp.WaitVisible(chromedp.CSS("#sync-dialog")), clickNow("#sync-go"),
		chromedp.WaitVisible(chromedp.CSS(`#sync-status .badge[data-status="Synced"]`)))
	f.waitOperation("by-name")
	if got := f.auditOutcomes("sync", "by-name"); len(got) != 2 || got[1] != "Succeeded" {
		t.Errorf("by-name's audited sync: %q, want started then Succeeded", got)
	}
}

// TestClickDuringPushesBrowser acts on the app page while live updates
// arrive every few milliseconds, each changing the tree (a health message)
// and nothing else: a history row's Roll back button, a tree node's
// button and a history cell's text are looked up and used by node id
// (chromedp.Click and Text), as a test or a person's pointer does, and
// must survive every push that did not change them.
func TestClickDuringPushesBrowser(t *testing.T) {
	f := newFixture(t)
	f.syncAndWait("guestbook", tokAdmin)
	ctx, run0 := newBrowser(t, 5*time.Minute)
	loginAs(run0, f.http.URL, tokAdmin)
	run := within(t, ctx, time.Minute)
	secret := "Secret " + f.ns + "/guestbook-db"
	run("open", chromedp.Navigate(f.http.URL+"/apps/guestbook"),
		chromedp.WaitVisible(chromedp.CSS(`button.rollback[data-id="1"]`)),
		chromedp.WaitVisible(chromedp.CSS(`button.open-node[data-key="`+secret+`"]`)))

	a, _ := f.portal.srv.app("guestbook")
	st, _ := f.portal.engine.Apps().AppStatus(v1alpha1.AppKey{Name: "guestbook"})
	pctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	up := pageUpdate{Tree: f.portal.srv.tree(pctx, a, st), History: f.portal.srv.historyRows(pctx, a),
		Operation: f.portal.srv.lastOperation(pctx, a), Commit: f.portal.srv.firstCommit(pctx, a, st.Revision)}
	cancel()
	changing := -1
	for i, n := range up.Tree.Roots {
		if n.Kind == "ConfigMap" {
			changing = i
		}
	}
	if changing < 0 {
		t.Fatalf("no ConfigMap in the tree: %+v", up.Tree.Roots)
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(3 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			up.Tree.Roots[changing].HealthMessage = fmt.Sprintf("push %d", i)
			data, _ := json.Marshal(up)
			f.portal.srv.opts.Hooks.broker.publish("guestbook", streamEvent{Name: "page", Data: json.RawMessage(data)})
		}
	}()
	defer func() { close(stop); <-done }()
	run("pushes arrive", chromedp.Poll[chromedp.Void](`/push [1-9]/.test(document.querySelector("#tree").textContent)`))
	for i := range 25 {
		var cell string
		run(fmt.Sprintf("round %d", i),
			chromedp.Click(chromedp.CSS(`button.rollback[data-id="1"]`)), chromedp.WaitVisible(chromedp.CSS("#rollback-dialog")),
			chromedp.Click(chromedp.CSS("#rollback-cancel")), chromedp.WaitNotVisible(chromedp.CSS("#rollback-dialog")),
			into(&cell, chromedp.Text(chromedp.CSS(`#history tr[data-id="1"] td.commit`))),
			chromedp.Click(chromedp.CSS(`button.open-node[data-key="`+secret+`"]`)))
		if !strings.Contains(cell, "initial commit") {
			t.Fatalf("round %d: history row 1 reads %q", i, cell)
		}
	}
	run("the last click opened the Secret", chromedp.Poll[chromedp.Void](`document.querySelector("#panel-title").textContent === `+jsString(secret)))
}
