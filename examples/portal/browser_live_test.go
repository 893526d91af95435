package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestBrowserPageStaysCurrent keeps one app page open, never reloaded,
// while the app is synced from the page and from the API and changed by
// hand: the tree (with the Pods' health), the history and the last
// operation follow over the event stream, and the sync dialog opens with
// its defaults each time, not with what the last sync ticked.
func TestBrowserPageStaysCurrent(t *testing.T) {
	f := newFixture(t)
	ctx, run := newBrowser(t, 5*time.Minute)
	loginAs(run, f.http.URL, tokAdmin)
	ns := f.ns
	node := func(key string) string { return `li.node[data-key="` + key + `"]` }
	cm := node("ConfigMap " + ns + "/guestbook-config")
	run("open app", chromedp.Navigate(f.http.URL+"/apps/guestbook"), chromedp.WaitVisible(chromedp.CSS(cm)))

	// A dry run with Prune ticked; the dialog opened again has every
	// option back at its default (unticked), as Argo CD's does.
	run("dry run with prune", chromedp.Click(chromedp.CSS("#sync")), chromedp.WaitVisible(chromedp.CSS("#sync-dialog")),
		chromedp.Click(chromedp.CSS("#opt-prune")), chromedp.Click(chromedp.CSS("#opt-dry-run")),
		chromedp.Click(chromedp.CSS("#sync-go")))
	f.waitAudit("sync", "Succeeded", 1)
	var ticked []string
	run("reopen the dialog", chromedp.Click(chromedp.CSS("#sync")), chromedp.WaitVisible(chromedp.CSS("#sync-dialog")),
		into(&ticked, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#sync-dialog input:checked")).map(i => i.id)`)))
	if len(ticked) != 0 {
		t.Errorf("the sync dialog opened again keeps %v ticked from the last sync", ticked)
	}
	run("sync", chromedp.Click(chromedp.CSS("#sync-go")))
	f.waitAudit("sync", "Succeeded", 2)
	if rec := f.lastAudit("sync"); rec.Details["prune"] != false || rec.Details["dryRun"] != false {
		t.Errorf("the second sync ran with %v, want prune and dry run off", rec.Details)
	}

	// Without a reload: the history row, the last operation, the
	// Deployment's ReplicaSet and its Pod, judged Healthy.
	id := f.lastHistoryID("guestbook")
	deploy := node("apps/Deployment " + ns + "/guestbook")
	run("page after the sync", chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#history tr[data-id="%d"]`, id))),
		chromedp.WaitVisible(chromedp.CSS(`#last-operation .badge[data-status="Succeeded"]`)),
		chromedp.WaitVisible(chromedp.CSS(cm+` > .node-sync .badge[data-status="Synced"]`)),
		chromedp.WaitVisible(chromedp.CSS(deploy+` li.node[data-key^="apps/ReplicaSet "]`)),
		chromedp.WaitVisible(chromedp.CSS(deploy+` li.node[data-key^="Pod "] > .node-health .badge[data-status="Healthy"]`)))

	// A change by hand shows in the tree within 2 s.
	kctx, kcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer kcancel()
	start := time.Now()
	if _, err := f.kube.CoreV1().ConfigMaps(ns).Patch(kctx, "guestbook-config", types.MergePatchType,
		[]byte(`{"data":{"message":"changed by hand"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 2*time.Second)
	defer wcancel()
	if err := chromedp.Do(wctx, chromedp.WaitVisible(chromedp.CSS(cm+` > .node-sync .badge[data-status="OutOfSync"]`))); err != nil {
		t.Fatalf("a hand edit did not show in the tree within 2 s: %v", err)
	}
	t.Logf("measure: hand edit to OutOfSync in the tree: %s", time.Since(start).Round(10*time.Millisecond))

	// A sync of a new commit from the API shows too: a new history row,
	// the last operation at that commit, the tree Synced again.
	changes := map[string][]byte{}
	for p, b := range guestbookFiles("hello v2") {
		changes[p] = b
	}
	second, err := f.git.Commit(kctx, "apps", "v2", changes)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, raw := f.call("POST", "/api/v1/apps/guestbook/refresh", tokAdmin, f.csrfOf(tokAdmin), map[string]any{"hard": true}); code != 202 {
		t.Fatalf("hard refresh: %d %s", code, raw)
	}
	f.waitStatus("guestbook", func(st appstatus.Status) bool { return st.Revision == second })
	f.syncAndWait("guestbook", tokAdmin)
	next := f.lastHistoryID("guestbook")
	if next == id {
		t.Fatalf("the sync of %s wrote no history entry (still #%d)", second, id)
	}
	var last string
	run("page after the API sync", chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#history tr[data-id="%d"]`, next))),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#history button.rollback[data-id="%d"]`, id))),
		chromedp.WaitVisible(chromedp.CSS(cm+` > .node-sync .badge[data-status="Synced"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#last-operation code[title="`+second+`"]`)),
		into(&last, chromedp.Text(chromedp.CSS("#last-operation"))))
	if !strings.Contains(last, "Succeeded") || !strings.Contains(last, shortRev(second)) {
		t.Errorf("last operation %q, want Succeeded at %s", last, shortRev(second))
	}
}

// lastHistoryID is the id of app's newest history entry (0 for none).
func (f *fixture) lastHistoryID(app string) int64 {
	f.t.Helper()
	h, err := f.portal.engine.History(context.Background(), v1alpha1.AppKey{Name: app})
	if err != nil {
		f.t.Fatal(err)
	}
	if len(h) == 0 {
		return 0
	}
	return h[len(h)-1].ID
}
