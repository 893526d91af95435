package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestBulkRefreshDeleteBrowser drives the list's bulk refresh and delete
// in headless Chromium under argocd-rbac-cm. With both apps synced and a
// new commit of guestbook pushed, bob (get on both apps, no delete)
// hard-refreshes both: both are queued and guestbook turns OutOfSync in
// the list without a reload. His bulk delete, confirmed from the
// keyboard after the dialog names both apps, is refused for each by name
// and audited. carol (get on team-a only) refreshing both through the
// API has other refused; a wrong confirmation deletes nothing (400).
// Then alice deletes both, foreground: the rows leave, guestbook's
// Deployment goes, and the audit log says each was deleted.
func TestBulkRefreshDeleteBrowser(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{RBACConfigMap: fixtureRBAC, Projects: fixtureRBACProjects})
	f.syncAndWait("guestbook", tokAdmin)
	f.syncAndWait("other", tokReaderA)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := f.git.Commit(ctx, "apps", "v2", map[string][]byte{"guestbook/configmap.yaml": guestbookFiles("hello v2")["guestbook/configmap.yaml"]}); err != nil {
		t.Fatal(err)
	}
	_, run := newBrowser(t, 4*time.Minute)
	loginAs(run, f.http.URL, tokReaderA)
	waitListStream(run, "stream")
	var started string
	run("bulk refresh", chromedp.Click(chromedp.CSS("#select-all")), chromedp.WaitEnabled(chromedp.CSS("#bulk-refresh")),
		chromedp.Click(chromedp.CSS("#bulk-hard")), chromedp.Click(chromedp.CSS("#bulk-refresh")),
		chromedp.Poll[chromedp.Void](`(document.querySelector("#bulk-started") || {}).textContent === "Refresh queued: guestbook, other"`),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-app="guestbook"] .badge[data-status="OutOfSync"]`)),
		into(&started, chromedp.Text(chromedp.CSS("#bulk-started"))))

	var names []string
	var goDisabled bool
	run("bob's delete dialog", chromedp.Click(chromedp.CSS("#bulk-delete")), chromedp.WaitVisible(chromedp.CSS("#bulk-delete-dialog")),
		into(&names, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#bulk-delete-apps li")).map((l) => l.textContent)`)),
		into(&goDisabled, chromedp.Evaluate[bool](`document.querySelector("#bulk-delete-go").disabled`)))
	if strings.Join(names, ",") != "guestbook,other" || !goDisabled {
		t.Errorf("delete dialog names %v with Delete disabled %v; want guestbook,other and disabled until confirmed", names, goDisabled)
	}
	shotAt(t, run, "portal-bulk-delete.png")
	run("bob deletes", chromedp.SendKeys(chromedp.CSS("#bulk-delete-confirm"), "2\r"),
		chromedp.WaitVisible(chromedp.CSS(`#bulk-refused li[data-app="guestbook"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#bulk-refused li[data-app="other"]`)),
		into(&started, chromedp.Text(chromedp.CSS("#bulk-started"))))
	if started != "Deletion started: none" {
		t.Errorf("bob's bulk delete says %q, want none started", started)
	}
	if a := f.audit.String(); !strings.Contains(a, `"user":"bob","groups":["readers-a"],"via":"token","action":"delete","app":"other","project":"team-b","details":{"bulk":true`) ||
		!strings.Contains(a, `"outcome":"refused: application other`) {
		t.Errorf("audit lacks bob's refused bulk delete of other: %s", a)
	}

	// The API: carol may not get other; a wrong confirmation is refused whole.
	code, _, raw := f.call("POST", "/api/v1/refresh", tokAdminA, f.csrfOf(tokAdminA), map[string]any{"apps": []string{"guestbook", "other"}})
	if code != http.StatusAccepted || !strings.Contains(raw, `"started":["guestbook"]`) || !strings.Contains(raw, `"app":"other","error":"application other: not found or not permitted"`) {
		t.Errorf("carol's bulk refresh: %d %s, want guestbook queued and other refused", code, raw)
	}
	code, _, raw = f.call("POST", "/api/v1/delete", tokAdmin, f.csrfOf(tokAdmin), map[string]any{"apps": []string{"guestbook", "other"}, "confirm": "1"})
	if code != http.StatusBadRequest || !strings.Contains(raw, "type the number of applications to delete (2)") {
		t.Errorf("bulk delete with a wrong confirmation: %d %s, want 400", code, raw)
	}

	loginAs(run, f.http.URL, tokAdmin)
	waitListStream(run, "alice's stream")
	run("alice deletes", chromedp.Click(chromedp.CSS("#select-all")), chromedp.WaitEnabled(chromedp.CSS("#bulk-delete")),
		chromedp.Click(chromedp.CSS("#bulk-delete")), chromedp.WaitVisible(chromedp.CSS("#bulk-delete-dialog")),
		chromedp.SendKeys(chromedp.CSS("#bulk-delete-confirm"), "2"), chromedp.Click(chromedp.CSS("#bulk-delete-go")),
		chromedp.Poll[chromedp.Void](`(document.querySelector("#bulk-started") || {}).textContent === "Deletion started: guestbook, other"`),
		chromedp.WaitNotPresent(chromedp.CSS(`tr[data-app="guestbook"]`)), chromedp.WaitNotPresent(chromedp.CSS(`tr[data-app="other"]`)))
	waitFor(t, 60*time.Second, "guestbook's Deployment deleted", func() (bool, string) {
		_, err := f.kube.AppsV1().Deployments(f.ns).Get(ctx, "guestbook", metav1.GetOptions{})
		return apierrors.IsNotFound(err), errString(err)
	})
	a := f.audit.String()
	for _, app := range []string{"guestbook", "other"} {
		if !strings.Contains(a, `"user":"alice","groups":["platform"],"via":"token","action":"delete","app":"`+app) || strings.Count(a, `"outcome":"deleted"`) != 2 {
			t.Errorf("audit lacks alice's deletion of %s: %s", app, a)
		}
	}
}
