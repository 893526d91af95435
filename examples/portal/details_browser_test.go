package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserDetails edits an app's sync policy from its details as a role
// with "applications, update": automated sync with self-heal and a sync
// option, saved through the engine (which then syncs the app by itself)
// and audited; a bad sync option is refused by name. A readonly role sees
// the same details disabled with no Save button, and the API answers it
// 403 (audited as refused).
func TestBrowserDetails(t *testing.T) {
	f := newFixture(t)
	ctx, run0 := newBrowser(t, 5*time.Minute)
	loginAs(run0, f.http.URL, tokAdmin)
	run := within(t, ctx, time.Minute)
	var automated, disabled bool
	run("open details", chromedp.Navigate(f.http.URL+"/apps/guestbook"), chromedp.Click(chromedp.CSS("#details-open")),
		chromedp.WaitVisible(chromedp.CSS("#details-save")),
		into(&automated, chromedp.Evaluate[bool](`document.getElementById("details-automated").checked`)),
		into(&disabled, chromedp.Evaluate[bool](`document.getElementById("details-self-heal").disabled`)))
	if automated || !disabled {
		t.Errorf("details of a manual app: automated %v, self-heal disabled %v; want off and disabled", automated, disabled)
	}
	run("edit", chromedp.Click(chromedp.CSS("#details-automated")), chromedp.Click(chromedp.CSS("#details-self-heal")),
		chromedp.SendKeys(chromedp.CSS("#details-sync-options"), "PruneLast=true"),
		chromedp.Click(chromedp.CSS("#details-save")),
		// The answer, not the status line (shown before it): the audit
		// record is written before the answer.
		chromedp.Poll[chromedp.Void](`document.querySelector("#details-state").textContent === "Saved."`))
	waitFor(t, 30*time.Second, "the edit saved", func() (bool, string) {
		rec := f.lastAudit("details")
		return rec.Outcome == "done", rec.Outcome
	})
	if rec := f.lastAudit("details"); rec.User != "alice" || rec.Details["automated"] != true || rec.Details["selfHeal"] != true {
		t.Errorf("audit of the edit: %+v", rec)
	}
	viewShot(t, run, "#details", "portal-details.png")
	// Automated now: the engine syncs the OutOfSync app without being asked.
	f.waitStatus("guestbook", syncedHealthy)
	var summary string
	var selfHeal bool
	run("after a reload", chromedp.Reload(), chromedp.Click(chromedp.CSS("#details-open")),
		chromedp.WaitVisible(chromedp.CSS("#details-save")),
		into(&selfHeal, chromedp.Evaluate[bool](`document.getElementById("details-self-heal").checked`)),
		into(&summary, chromedp.Text(chromedp.CSS(".summary"))))
	if !selfHeal || !strings.Contains(summary, "Automated sync\non") && !strings.Contains(summary, "Automated sync on") {
		t.Errorf("after a reload: self-heal %v, summary %q; want the edit kept", selfHeal, summary)
	}
	code, _, raw := f.call("POST", "/api/v1/apps/guestbook/details", tokAdmin, f.csrfOf(tokAdmin), map[string]any{"syncOptions": []string{"Bogus=true"}})
	if code != http.StatusBadRequest || !strings.Contains(raw, "Bogus") {
		t.Errorf("a bad sync option: %d %s, want 400 naming it", code, raw)
	}

	// A readonly role: shown, not editable, refused by the API.
	code, out, raw := f.call("GET", "/api/v1/apps/guestbook/permissions", tokReaderA, "", nil)
	if code != http.StatusOK || out["update"] != false {
		t.Errorf("reader's permissions: %d %s, want update false", code, raw)
	}
	code, _, raw = f.call("POST", "/api/v1/apps/guestbook/details", tokReaderA, f.csrfOf(tokReaderA), map[string]any{"automated": false})
	if code != http.StatusForbidden {
		t.Errorf("reader's edit: %d %s, want 403", code, raw)
	}
	if rec := f.lastAudit("details"); rec.User != "bob" || !strings.HasPrefix(rec.Outcome, refusedPrefix) {
		t.Errorf("the reader's refused edit is not audited as refused: %+v", rec)
	}
	if a, _ := f.portal.srv.app("guestbook"); a.Spec.SyncPolicy == nil || a.Spec.SyncPolicy.Automated == nil {
		t.Error("the reader's refused edit turned automated sync off")
	}
	loginAs(run0, f.http.URL, tokReaderA)
	var inputs, enabled int
	run("reader's details", chromedp.Navigate(f.http.URL+"/apps/guestbook"), chromedp.Click(chromedp.CSS("#details-open")),
		chromedp.WaitVisible(chromedp.CSS("#details-readonly")),
		into(&inputs, chromedp.Evaluate[int](`document.querySelectorAll("#details input, #details textarea").length`)),
		into(&enabled, chromedp.Evaluate[int](`document.querySelectorAll("#details input:enabled, #details textarea:enabled, #details-save").length`)))
	if inputs == 0 || enabled != 0 {
		t.Errorf("reader's details: %d fields, %d enabled or a Save button; want all shown disabled", inputs, enabled)
	}
}
