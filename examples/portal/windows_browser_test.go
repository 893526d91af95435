package main

import (
	"fmt"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestClustersWindowsBrowser drives the list and the app page in headless
// Chromium with an Argo CD cluster Secret naming the in-cluster address
// dev-east and a team-b allow window that opens in two hours: the list and
// the page show the cluster by its name (the filter offers the name, not
// the URL); other's Sync button is disabled and says the window blocks it
// and when it opens, while guestbook's (team-a, no window) is enabled; and
// the engine refuses other's sync through the API, audited as refused.
func TestClustersWindowsBrowser(t *testing.T) {
	opens := time.Now().UTC().Add(2 * time.Hour).Truncate(time.Minute)
	projects := fixtureProjects + fmt.Sprintf(`  syncWindows:
    - {kind: allow, schedule: "%d %d * * *", duration: 1h, applications: ["*"]}
`, opens.Minute(), opens.Hour())
	f := newFixtureWith(t, fixtureOptions{Projects: projects, ClusterSecret: true})
	_, run := newBrowser(t, 4*time.Minute)
	loginAs(run, f.http.URL, tokAdmin)
	var cell, filter string
	run("list", chromedp.WaitVisible(chromedp.CSS(`tr[data-app="other"]`)),
		into(&cell, chromedp.Text(chromedp.CSS(`tr[data-app="guestbook"] td:nth-child(4)`))),
		into(&filter, chromedp.Text(chromedp.CSS(`select[name="cluster"]`))))
	if !strings.HasPrefix(cell, "dev-east / ") || strings.Contains(filter, v1alpha1.KubernetesInternalAPIServerAddr) || !strings.Contains(filter, "dev-east") {
		t.Errorf("list shows cluster %q and filter choices %q, want dev-east and no URL", cell, filter)
	}
	var note, title, dest string
	var disabled bool
	run("other", chromedp.Navigate(f.http.URL+"/apps/other"), chromedp.WaitVisible(chromedp.CSS("#sync-window")),
		into(&note, chromedp.Text(chromedp.CSS("#sync-window"))),
		into(&title, chromedp.Evaluate[string](`document.querySelector("#sync").title`)),
		into(&disabled, chromedp.Evaluate[bool](`document.querySelector("#sync").disabled`)),
		into(&dest, chromedp.Evaluate[string](`Array.from(document.querySelectorAll(".summary dd")).map(d => d.textContent).join("|")`)))
	shotAt(t, run, "portal-sync-window.png")
	want := opens.Format("2006-01-02 15:04Z")
	if !disabled || !strings.Contains(note, "no allow window is open") || !strings.Contains(note, want) || !strings.Contains(title, want) {
		t.Errorf("other's Sync: disabled %v, note %q, title %q; want disabled, the reason and %s", disabled, note, title, want)
	}
	if !strings.Contains(dest, "dev-east / "+f.ns) {
		t.Errorf("app page destination %q, want dev-east / %s", dest, f.ns)
	}
	var windows int
	run("guestbook", chromedp.Navigate(f.http.URL+"/apps/guestbook"), chromedp.WaitVisible(chromedp.CSS("#sync")),
		into(&windows, chromedp.Evaluate[int](`document.querySelectorAll("#sync-window, #sync:disabled").length`)))
	if windows != 0 {
		t.Errorf("guestbook (no window) shows %d blocked marks, want none", windows)
	}
	// The step after: the sync the page blocks is refused at once (403,
	// Engine.CheckSync), as Argo CD's API refuses it, and audited.
	code, _, raw := f.call("POST", "/api/v1/apps/other/sync", tokAdmin, f.csrfOf(tokAdmin), map[string]any{})
	if code != http.StatusForbidden || !strings.Contains(raw, "blocked") {
		t.Fatalf("sync other: %d %s, want 403 blocked", code, raw)
	}
	if a := f.audit.String(); !strings.Contains(a, `"app":"other"`) || !strings.Contains(a, `"outcome":"refused: sync of other blocked`) {
		t.Errorf("audit lacks other's refused sync: %s", a)
	}
}
