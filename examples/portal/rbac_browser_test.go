package main

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestRBACBrowser drives the app page in headless Chromium under
// argocd-rbac-cm as carol, whose role may get team-a's apps and restart
// their Deployments but not sync: no Sync, Terminate or Roll back button;
// in the Deployment's Actions tab restart is enabled (and runs) while
// pause, which her role lacks, is disabled.
func TestRBACBrowser(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{RBACConfigMap: fixtureRBAC, Projects: fixtureRBACProjects})
	f.syncAndWait("guestbook", tokAdmin) // alice deploys: a Deployment and a history entry
	_, run := newBrowser(t, 4*time.Minute)
	loginAs(run, f.http.URL, tokAdminA)
	dep := "apps/Deployment " + f.ns + "/guestbook"
	var syncButtons int
	run("app page", chromedp.Navigate(f.http.URL+"/apps/guestbook"),
		chromedp.WaitVisible(chromedp.CSS(`li.node[data-key="`+dep+`"]`)),
		into(&syncButtons, chromedp.Evaluate[int](`document.querySelectorAll("#sync, #terminate, button.rollback").length`)))
	if syncButtons != 0 {
		t.Errorf("carol (no sync) sees %d Sync/Terminate/Roll back buttons, want none", syncButtons)
	}
	var restartDisabled, pauseDisabled bool
	run("actions tab", chromedp.Click(chromedp.CSS(`button.open-node[data-key="`+dep+`"]`)),
		chromedp.Click(chromedp.CSS("#tab-actions")),
		chromedp.WaitVisible(chromedp.CSS(`#view-actions button[data-action="restart"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#view-actions button[data-action="pause"]`)),
		into(&restartDisabled, chromedp.Evaluate[bool](`document.querySelector('#view-actions button[data-action="restart"]').disabled`)),
		into(&pauseDisabled, chromedp.Evaluate[bool](`document.querySelector('#view-actions button[data-action="pause"]').disabled`)))
	if restartDisabled || !pauseDisabled {
		t.Errorf("actions: restart disabled %v, pause disabled %v; want restart enabled, pause disabled", restartDisabled, pauseDisabled)
	}
	run("restart", chromedp.Click(chromedp.CSS(`#view-actions button[data-action="restart"]`)),
		chromedp.Poll[chromedp.Void](`document.querySelector("#notice").textContent.startsWith("Action restart done")`))
	if a := f.audit.String(); !contains(a, `"user":"carol"`) || !contains(a, `"action":"action"`) || !contains(a, `"outcome":"done"`) {
		t.Errorf("audit log lacks carol's restart: %s", a)
	}
}
