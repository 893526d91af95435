package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestSyncWindowsListBrowser shows the project's sync windows on the app
// page in headless Chromium: team-b has a deny window open now with
// manualSync, an allow window with manualSync that opens in two hours,
// and a window for another app. other's page lists the two that apply,
// in the project's order, the deny one active and blocking automated
// syncs only, the allow one inactive, and says a manual sync is allowed
// now and an automated one blocked; guestbook (team-a, no window) has no
// such section. The step after: other's manual sync, which the page
// allows, starts (202) and succeeds.
func TestSyncWindowsListBrowser(t *testing.T) {
	opens := time.Now().UTC().Add(2 * time.Hour).Truncate(time.Minute)
	projects := fixtureProjects + fmt.Sprintf(`  syncWindows:
    - {kind: deny, schedule: "* * * * *", duration: 1h, applications: ["*"], manualSync: true, description: freeze}
    - {kind: allow, schedule: "%d %d * * *", duration: 1h, namespaces: ["*"], manualSync: true}
    - {kind: deny, schedule: "* * * * *", duration: 1h, applications: ["nomatch"]}
`, opens.Minute(), opens.Hour())
	f := newFixtureWith(t, fixtureOptions{Projects: projects})
	_, run := newBrowser(t, 4*time.Minute)
	loginAs(run, f.http.URL, tokAdmin)
	var rows [][]string
	var now string
	var syncDisabled bool
	run("other", chromedp.Navigate(f.http.URL+"/apps/other"), chromedp.WaitVisible(chromedp.CSS("#sync-windows")),
		into(&rows, chromedp.Evaluate[[][]string](`Array.from(document.querySelectorAll("#sync-windows tr.window")).map((tr) => Array.from(tr.children).map((td) => td.textContent))`)),
		into(&now, chromedp.Text(chromedp.CSS("#sync-windows-now"))),
		into(&syncDisabled, chromedp.Evaluate[bool](`document.querySelector("#sync").disabled`)))
	shotAt(t, run, "portal-sync-windows.png")
	want := [][]string{
		{"deny", "* * * * *freeze", "1h", "enabled", "active", "blocks automated syncs; manual syncs allowed"},
		{"allow", fmt.Sprintf("%d %d * * *", opens.Minute(), opens.Hour()), "1h", "enabled", "inactive", "closed: automated syncs wait for it; manual syncs allowed"},
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("other's windows:\n got %q\nwant %q", rows, want)
	}
	if now != "Now: manual sync allowed, automated sync blocked." || syncDisabled {
		t.Errorf("other's window summary %q, Sync disabled %v; want manual allowed, automated blocked, Sync enabled", now, syncDisabled)
	}
	var sections int
	run("guestbook", chromedp.Navigate(f.http.URL+"/apps/guestbook"), chromedp.WaitVisible(chromedp.CSS("#sync")),
		into(&sections, chromedp.Evaluate[int](`document.querySelectorAll("#sync-windows").length`)))
	if sections != 0 {
		t.Errorf("guestbook (no window) shows %d sync window sections, want none", sections)
	}
	code, _, raw := f.call("POST", "/api/v1/apps/other/sync", tokAdmin, f.csrfOf(tokAdmin), map[string]any{})
	if code != http.StatusAccepted {
		t.Fatalf("manual sync of other, which its windows allow: %d %s", code, raw)
	}
	f.waitOperation("other")
	if a := f.audit.String(); !strings.Contains(a, `"app":"other"`) || !strings.Contains(a, `"outcome":"Succeeded"`) {
		t.Errorf("audit lacks other's manual sync: %s", a)
	}
}
