package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/kubegitops/gitops/appstatus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// shotAt captures the page at 1280x800 as docs/name (with -screenshots)
// and fails when the PNG is larger than maxScreenshot.
func shotAt(t *testing.T, run func(string, ...chromedp.Action[chromedp.Void]), name string) {
	t.Helper()
	var png []byte
	run("screenshot "+name, chromedp.EmulateViewport(1280, 800), into(&png, chromedp.CaptureScreenshot()))
	if len(png) > maxScreenshot {
		t.Errorf("screenshot %s is %d bytes, more than %d", name, len(png), maxScreenshot)
	}
	if *writeScreenshots {
		if err := os.WriteFile(filepath.Join("..", "..", "docs", name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestListTilesBrowser drives the list's tiles and bulk sync in headless
// Chromium under argocd-rbac-cm as alice, who may sync team-a's apps but
// not team-b's (a deny line): the tiles count both apps OutOfSync, the
// OutOfSync tile filters the list, "Sync selected" of both starts
// guestbook and reports other refused by name (and audits it); then the
// tiles count guestbook Synced and its filter shows it.
func TestListTilesBrowser(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{RBACConfigMap: fixtureRBAC, Projects: fixtureRBACProjects})
	f.waitStatus("other", func(st appstatus.Status) bool { return st.Sync == appstatus.OutOfSync })
	_, run := newBrowser(t, 4*time.Minute)
	loginAs(run, f.http.URL, tokAdmin)
	tileSel := func(kind, status string) string {
		return `a.tile[data-kind="` + kind + `"][data-status="` + status + `"]`
	}
	var outOfSync string
	run("tiles", chromedp.WaitVisible(chromedp.CSS(tileSel("sync", "OutOfSync"))),
		into(&outOfSync, chromedp.Text(chromedp.CSS(tileSel("sync", "OutOfSync")+" .tile-count"))))
	if outOfSync != "2" {
		t.Errorf("OutOfSync tile counts %q, want 2", outOfSync)
	}
	var rows int
	var loc string
	run("click tile", chromedp.Click(chromedp.CSS(tileSel("sync", "OutOfSync"))),
		chromedp.WaitVisible(chromedp.CSS(tileSel("sync", "OutOfSync")+`.active`)),
		into(&loc, chromedp.Location()),
		into(&rows, chromedp.Evaluate[int](`document.querySelectorAll("tr[data-app]").length`)))
	if !strings.Contains(loc, "sync=OutOfSync") || rows != 2 {
		t.Errorf("after the OutOfSync tile: at %s with %d rows, want sync=OutOfSync and 2 rows", loc, rows)
	}
	run("bulk sync", chromedp.Click(chromedp.CSS("#select-all")),
		chromedp.WaitEnabled(chromedp.CSS("#bulk-sync")), chromedp.Click(chromedp.CSS("#bulk-sync")),
		chromedp.WaitVisible(chromedp.CSS(`#bulk-refused li[data-app="other"]`)))
	shotAt(t, run, "portal-list-tiles.png")
	var started, refused string
	run("bulk result", into(&started, chromedp.Text(chromedp.CSS("#bulk-started"))),
		into(&refused, chromedp.Text(chromedp.CSS(`#bulk-refused li[data-app="other"]`))))
	if !strings.Contains(started, "guestbook") || strings.Contains(started, "other") {
		t.Errorf("bulk sync started %q, want guestbook only", started)
	}
	if !strings.Contains(refused, "other") || !strings.Contains(refused, "sync") {
		t.Errorf("other's refusal says %q, want its name and the missing sync", refused)
	}
	if a := f.audit.String(); !strings.Contains(a, `"app":"other"`) || !strings.Contains(a, `"bulk":true`) || !strings.Contains(a, `"outcome":"refused: `) {
		t.Errorf("audit log lacks other's refused bulk sync: %s", a)
	}
	// The step after: guestbook synced, other still OutOfSync.
	f.waitOperation("guestbook")
	f.waitStatus("guestbook", syncedHealthy)
	var synced string
	run("after", chromedp.Navigate(f.http.URL+"/"), chromedp.WaitVisible(chromedp.CSS(tileSel("sync", "Synced"))),
		into(&synced, chromedp.Text(chromedp.CSS(tileSel("sync", "Synced")+" .tile-count"))),
		chromedp.Click(chromedp.CSS(tileSel("sync", "Synced"))),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-app="guestbook"]`)),
		into(&rows, chromedp.Evaluate[int](`document.querySelectorAll("tr[data-app]").length`)))
	if synced != "1" || rows != 1 {
		t.Errorf("after the bulk sync: Synced tile %q and %d rows under it, want 1 and 1", synced, rows)
	}
	// The pushed list changes the rows it shows and adds none: bob syncs
	// other (team-b), then guestbook turns OutOfSync by a hand edit; when
	// the page shows that (events arrive in order), other's changes have
	// come too, and the team-a view must still lack it.
	run("team-a view", chromedp.Navigate(f.http.URL+"/?project=team-a"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-app="guestbook"] .badge[data-status="Synced"]`)))
	f.syncAndWait("other", tokReaderA)
	kctx, kcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer kcancel()
	if _, err := f.kube.CoreV1().ConfigMaps(f.ns).Patch(kctx, "guestbook-config", types.MergePatchType,
		[]byte(`{"data":{"message":"changed by hand"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	var others int
	run("pushed row", chromedp.WaitVisible(chromedp.CSS(`tr[data-app="guestbook"] .badge[data-status="OutOfSync"]`)),
		into(&others, chromedp.Evaluate[int](`document.querySelectorAll('tr[data-app="other"]').length`)))
	if others != 0 {
		t.Errorf("the team-a list shows other after its status changed: %d rows", others)
	}
}
