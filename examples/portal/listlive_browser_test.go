package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
)

// tileCount is a JavaScript expression: the count of a tile as text.
func tileCount(kind, status string) string {
	return `document.querySelector('a.tile[data-kind="` + kind + `"][data-status="` + status + `"] .tile-count').textContent`
}

// waitListStream waits until the list page listens to its stream, so that
// what a test changes next is pushed to it.
func waitListStream(run func(string, ...chromedp.Action[chromedp.Void]), what string) {
	run(what, chromedp.WaitVisible(chromedp.CSS(`#apps[data-list-stream="open"]`)))
}

// TestListLiveBrowser keeps the list open in headless Chromium as alice
// and changes the apps behind it, never reloading: guestbook's sync
// through the API turns its row Synced and moves the sync tiles (2
// OutOfSync becomes 1, 0 Synced becomes 1); on the list filtered to
// OutOfSync, an app created through the API appears with the count line
// and tile, other's sync by bob takes it out of that list, and the
// created app's deletion takes it out too, leaving "No application
// matches." and an OutOfSync tile of 0. j still moves to the rows drawn
// by a push.
func TestListLiveBrowser(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{RBACConfigMap: fixtureRBAC, Projects: fixtureRBACProjects})
	f.waitStatus("other", func(st appstatus.Status) bool { return st.Sync == appstatus.OutOfSync })
	_, run := newBrowser(t, 4*time.Minute)
	loginAs(run, f.http.URL, tokAdmin)
	waitListStream(run, "stream")
	var before string
	run("tiles at load", into(&before, chromedp.Evaluate[string](tileCount("sync", "OutOfSync"))))
	if before != "2" {
		t.Fatalf("OutOfSync tile at load: %q, want 2", before)
	}

	f.syncAndWait("guestbook", tokAdmin)
	run("pushed sync", chromedp.WaitVisible(chromedp.CSS(`tr[data-app="guestbook"] .badge[data-status="Synced"]`)),
		chromedp.Poll[chromedp.Void](tileCount("sync", "Synced")+` === "1" && `+tileCount("sync", "OutOfSync")+` === "1" && `+
			tileCount("health", "Healthy")+` === "1"`))

	// The list filtered to OutOfSync follows the apps in and out of it.
	run("filtered", chromedp.Navigate(f.http.URL+"/?sync=OutOfSync"), chromedp.WaitVisible(chromedp.CSS(`tr[data-app="other"]`)))
	waitListStream(run, "filtered stream")
	code, _, raw := f.call("POST", "/api/v1/apps", tokAdmin, f.csrfOf(tokAdmin), map[string]any{"name": "third", "project": "team-a",
		"repoURL": f.repo, "path": "other", "cluster": v1alpha1.KubernetesInternalAPIServerAddr, "namespace": f.ns + "-third"})
	if code != http.StatusCreated {
		t.Fatalf("create third: %d %s", code, raw)
	}
	var count string
	run("created", chromedp.WaitVisible(chromedp.CSS(`tr[data-app="third"] .badge[data-status="OutOfSync"]`)),
		chromedp.Poll[chromedp.Void](tileCount("sync", "OutOfSync")+` === "2"`),
		into(&count, chromedp.Text(chromedp.CSS("#count"))))
	if !strings.HasPrefix(count, "2 applications") {
		t.Errorf("count line after the create: %q, want 2 applications", count)
	}
	shotAt(t, run, "portal-list-live.png")

	f.syncAndWait("other", tokReaderA)
	run("synced away", chromedp.WaitNotPresent(chromedp.CSS(`tr[data-app="other"]`)),
		chromedp.Poll[chromedp.Void](tileCount("sync", "Synced")+` === "2"`))

	code, _, raw = f.call("POST", "/api/v1/apps/third/delete", tokAdmin, f.csrfOf(tokAdmin), map[string]any{"cascade": "non-cascading", "confirm": "third"})
	if code != http.StatusAccepted {
		t.Fatalf("delete third: %d %s", code, raw)
	}
	var empty string
	run("deleted", chromedp.WaitNotPresent(chromedp.CSS(`tr[data-app="third"]`)),
		chromedp.Poll[chromedp.Void](tileCount("sync", "OutOfSync")+` === "0"`),
		into(&empty, chromedp.Text(chromedp.CSS("#apps tbody"))))
	if !strings.Contains(empty, "No application matches.") {
		t.Errorf("the emptied list says %q, want No application matches.", empty)
	}

	// Rows drawn by a push are reached from the keyboard.
	var focused string
	run("keys", chromedp.Navigate(f.http.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`tr[data-app="other"]`)))
	waitListStream(run, "stream again")
	code, _, raw = f.call("POST", "/api/v1/apps", tokAdmin, f.csrfOf(tokAdmin), map[string]any{"name": "aaa", "project": "team-a",
		"repoURL": f.repo, "path": "other", "cluster": v1alpha1.KubernetesInternalAPIServerAddr, "namespace": f.ns + "-aaa"})
	if code != http.StatusCreated {
		t.Fatalf("create aaa: %d %s", code, raw)
	}
	run("j", chromedp.WaitVisible(chromedp.CSS(`tr[data-app="aaa"]`)), chromedp.KeyEvent("j"),
		into(&focused, chromedp.Evaluate[string](`document.activeElement.textContent`)))
	if focused != "aaa" {
		t.Errorf("j focuses %q, want the pushed first row aaa", focused)
	}
	// A push that redraws the rows keeps the focus where it was.
	code, _, raw = f.call("POST", "/api/v1/apps", tokAdmin, f.csrfOf(tokAdmin), map[string]any{"name": "aab", "project": "team-a",
		"repoURL": f.repo, "path": "other", "cluster": v1alpha1.KubernetesInternalAPIServerAddr, "namespace": f.ns + "-aab"})
	if code != http.StatusCreated {
		t.Fatalf("create aab: %d %s", code, raw)
	}
	run("focus kept", chromedp.WaitVisible(chromedp.CSS(`tr[data-app="aab"]`)),
		into(&focused, chromedp.Evaluate[string](`document.activeElement.textContent`)))
	if focused != "aaa" {
		t.Errorf("after a push drew aab, the focus is on %q, want aaa still", focused)
	}
}
