package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/kubegitops/gitops/testenv"
)

// TestPodLogsBrowser drives the Logs tab in headless Chromium under
// argocd-rbac-cm: alice (logs, get) opens the Deployment, its Pod's
// container logs appear and a line written later follows; bob (no logs)
// sees no Logs tab on the same node.
func TestPodLogsBrowser(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{RBACConfigMap: fixtureRBAC, Projects: fixtureRBACProjects})
	f.syncAndWait("guestbook", tokAdmin)
	pod := f.guestbookPod()
	current, _ := cluster.PodLogFiles()
	first, later := "browser-first-"+f.ns, "browser-later-"+f.ns
	if err := testenv.AppendPodLog(current, first); err != nil {
		t.Fatal(err)
	}
	dep := "apps/Deployment " + f.ns + "/guestbook"
	hasLine := func(s string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](`document.querySelector("#log-lines").textContent.includes(` + "`" + s + "`" + `)`)
	}

	_, run := newBrowser(t, 4*time.Minute)
	loginAs(run, f.http.URL, tokAdmin)
	run("logs tab", chromedp.Navigate(f.http.URL+"/apps/guestbook"),
		chromedp.Click(chromedp.CSS(`button.open-node[data-key="`+dep+`"]`)),
		chromedp.WaitVisible(chromedp.CSS("#tab-logs")),
		chromedp.Click(chromedp.CSS("#tab-logs")),
		chromedp.Poll[chromedp.Void](`document.querySelector("#log-pod").value === `+"`"+pod+"`"),
		hasLine(first))
	if err := testenv.AppendPodLog(current, later); err != nil {
		t.Fatal(err)
	}
	run("follow", hasLine(later))
	if *writeScreenshots {
		var png []byte
		run("screenshot", chromedp.ScrollIntoView(chromedp.CSS("#panel")), into(&png, chromedp.CaptureScreenshot()))
		if len(png) > maxScreenshot {
			t.Errorf("screenshot is %d bytes, more than %d", len(png), maxScreenshot)
		}
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "portal-logs.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// bob: the same node, no Logs tab.
	_, runBob := newBrowser(t, 2*time.Minute)
	loginAs(runBob, f.http.URL, tokReaderA)
	var tabs int
	runBob("bob's panel", chromedp.Navigate(f.http.URL+"/apps/guestbook"),
		chromedp.Click(chromedp.CSS(`button.open-node[data-key="`+dep+`"]`)),
		chromedp.WaitVisible(chromedp.CSS("#tab-live")),
		into(&tabs, chromedp.Evaluate[int](`document.querySelectorAll("#tab-logs, #view-logs").length`)))
	if tabs != 0 {
		t.Errorf("bob (no logs, get) has %d Logs tab elements, want none", tabs)
	}
}
