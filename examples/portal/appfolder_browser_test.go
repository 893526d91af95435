package main

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// restart stops the portal and starts it again over the same --apps
// folder, read again from disk, behind a new HTTP server (sessions are
// the portal's memory: log in again).
func (f *fixture) restart() {
	f.t.Helper()
	f.http.CloseClientConnections()
	f.http.Close()
	f.portal.close()
	apps, err := loadAppsDir(f.appDir)
	if err != nil {
		f.t.Fatal(err)
	}
	sets, err := loadAppSetsDir(f.appDir)
	if err != nil {
		f.t.Fatal(err)
	}
	cfg := f.cfg
	cfg.Apps, cfg.AppSets = apps, sets
	if f.portal, err = startPortal(context.Background(), cfg); err != nil {
		f.t.Fatal(err)
	}
	f.http = httptest.NewServer(f.portal.srv)
}

// TestBrowserAppsFolderEdits edits an app of an --apps folder from its
// details in Chromium (a sync option added, typed and saved from the
// keyboard): the app's file has the edit, with the comments a user wrote
// and the other app kept; after a restart of the portal the details show
// it. An app created in the portal gets a file of its own and is served
// after the restart; one deleted leaves its file.
func TestBrowserAppsFolderEdits(t *testing.T) {
	f := newFixture(t)
	file := filepath.Join(f.appDir, "apps.yaml")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// The user's comments, written by hand after the portal started.
	commented := strings.Replace("# our apps, reviewed by team a\n"+string(b), "  project: team-a\n", "  project: team-a # owned by a\n", 1)
	if err := os.WriteFile(file, []byte(commented), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, run0 := newBrowser(t, 5*time.Minute)
	loginAs(run0, f.http.URL, tokAdmin)
	run := within(t, ctx, time.Minute)
	run("edit", chromedp.Navigate(f.http.URL+"/apps/guestbook"), chromedp.WaitVisible(chromedp.CSS("#details-open")),
		focusNow("#details-open"), chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(chromedp.CSS("#details-save")),
		chromedp.SendKeys(chromedp.CSS("#details-sync-options"), "PruneLast=true"),
		focusNow("#details-save"), chromedp.KeyEvent("\r"),
		chromedp.Poll[chromedp.Void](`document.querySelector("#details-state").textContent === "Saved."`))
	b, err = os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"PruneLast=true", "# our apps, reviewed by team a", "project: team-a # owned by a", "name: other"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s after the edit lacks %q:\n%s", file, want, b)
		}
	}
	if strings.Count(string(b), "PruneLast=true") != 1 {
		t.Errorf("the edit is written more than once:\n%s", b)
	}
	if rec := f.lastAudit("details"); rec.Outcome != "done" {
		t.Errorf("audit of the edit: %+v", rec)
	}
	code, _, raw := f.call("POST", "/api/v1/apps", tokAdmin, f.csrfOf(tokAdmin), map[string]any{"name": "made-here", "project": "team-a",
		"repoURL": f.repo, "path": "guestbook", "cluster": f.cfg.Engine.Clusters[0].Server, "namespace": f.ns})
	if code != 201 {
		t.Fatalf("create: %d %s", code, raw)
	}
	if _, err := os.Stat(filepath.Join(f.appDir, "made-here.yaml")); err != nil {
		t.Errorf("the created app's file: %v", err)
	}

	f.restart()
	loginAs(run0, f.http.URL, tokAdmin)
	var options string
	run("after a restart", chromedp.Navigate(f.http.URL+"/apps/guestbook"), chromedp.Click(chromedp.CSS("#details-open")),
		chromedp.WaitVisible(chromedp.CSS("#details-save")),
		into(&options, chromedp.Value(chromedp.CSS("#details-sync-options"))))
	if !strings.Contains(options, "PruneLast=true") {
		t.Errorf("sync options after a restart: %q, want the edit", options)
	}
	if _, ok := f.portal.srv.app("made-here"); !ok {
		t.Error("made-here is not served after a restart")
	}
	code, _, raw = f.call("POST", "/api/v1/apps/made-here/delete", tokAdmin, f.csrfOf(tokAdmin), map[string]any{"cascade": cascadeNone, "confirm": "made-here"})
	if code != 202 {
		t.Fatalf("delete: %d %s", code, raw)
	}
	waitFor(t, 30*time.Second, "made-here's file removed", func() (bool, string) {
		_, err := os.Stat(filepath.Join(f.appDir, "made-here.yaml"))
		return os.IsNotExist(err), f.lastAudit("delete").Outcome
	})
}
