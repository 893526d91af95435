package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestBulkDeleteConfirmResourcesBrowser deletes guestbook, which holds a
// ConfigMap marked Delete=confirm, from the list's bulk delete in
// headless Chromium, from the keyboard. Without "Also delete resources
// marked Delete=confirm" the deletion stops at that object: the audit
// log's outcome names it, the app stays listed and the object stays.
// With the box ticked (Argo CD's Confirm Deletion, for every app named)
// the app and the object go, and the audit log records the approval.
func TestBulkDeleteConfirmResourcesBrowser(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	guarded := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: guarded\n  annotations: {argocd.argoproj.io/sync-options: Delete=confirm}\ndata: {a: b}\n"
	if _, err := f.git.Commit(ctx, "apps", "a guarded object", map[string][]byte{"guestbook/guarded.yaml": []byte(guarded)}); err != nil {
		t.Fatal(err)
	}
	if code, _, raw := f.call("POST", "/api/v1/refresh", tokAdmin, f.csrfOf(tokAdmin), map[string]any{"apps": []string{"guestbook"}, "hard": true}); code != http.StatusAccepted {
		t.Fatalf("refresh: %d %s", code, raw)
	}
	f.syncAndWait("guestbook", tokAdmin)
	if _, err := f.kube.CoreV1().ConfigMaps(f.ns).Get(ctx, "guarded", metav1.GetOptions{}); err != nil {
		t.Fatalf("the guarded ConfigMap after the sync: %v", err)
	}
	_, run := newBrowser(t, 4*time.Minute)
	loginAs(run, f.http.URL, tokAdmin)
	waitListStream(run, "stream")
	// openDialog selects guestbook and opens the delete dialog, all from
	// the keyboard, and types the confirmation.
	openDialog := func(what string, approve bool) {
		t.Helper()
		acts := []chromedp.Action[chromedp.Void]{focusNow(`input.select-app[value="guestbook"]`), chromedp.KeyEvent(" "),
			chromedp.WaitEnabled(chromedp.CSS("#bulk-delete")), focusNow("#bulk-delete"), chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(chromedp.CSS("#bulk-delete-dialog"))}
		if approve {
			acts = append(acts, focusNow("#bulk-delete-confirm-resources"), chromedp.KeyEvent(" "))
		}
		acts = append(acts, chromedp.SendKeys(chromedp.CSS("#bulk-delete-confirm"), "1\r"),
			chromedp.Poll[chromedp.Void](`(document.querySelector("#bulk-started") || {}).textContent === "Deletion started: guestbook"`))
		run(what, acts...)
	}
	openDialog("delete without approval", false)
	waitFor(t, time.Minute, "the unapproved deletion ended", func() (bool, string) {
		rec := f.lastAudit("delete")
		return rec.Outcome != "started", rec.Outcome
	})
	if rec := f.lastAudit("delete"); !strings.Contains(rec.Outcome, "Delete=confirm") || rec.Details["confirmResources"] != false {
		t.Errorf("the unapproved deletion's audit: %+v, want an error naming Delete=confirm", rec)
	}
	if _, err := f.kube.CoreV1().ConfigMaps(f.ns).Get(ctx, "guarded", metav1.GetOptions{}); err != nil {
		t.Errorf("the guarded ConfigMap after an unapproved deletion: %v, want it kept", err)
	}
	if _, ok := f.portal.srv.app("guestbook"); !ok {
		t.Fatal("guestbook is gone though its deletion was not approved")
	}

	run("reload", chromedp.Reload())
	waitListStream(run, "stream again")
	var checked bool
	run("approval unchecked at each opening", chromedp.Click(chromedp.CSS(`input.select-app[value="guestbook"]`)), chromedp.Click(chromedp.CSS("#bulk-delete")),
		chromedp.WaitVisible(chromedp.CSS("#bulk-delete-dialog")),
		into(&checked, chromedp.Evaluate[bool](`document.querySelector("#bulk-delete-confirm-resources").checked`)),
		chromedp.Click(chromedp.CSS("#bulk-delete-cancel")), chromedp.Click(chromedp.CSS(`input.select-app[value="guestbook"]`)))
	if checked {
		t.Error("the approval is checked when the dialog opens")
	}
	openDialog("delete with approval", true)
	run("row gone", chromedp.WaitNotPresent(chromedp.CSS(`tr[data-app="guestbook"]`)))
	waitFor(t, time.Minute, "the guarded ConfigMap deleted", func() (bool, string) {
		_, err := f.kube.CoreV1().ConfigMaps(f.ns).Get(ctx, "guarded", metav1.GetOptions{})
		return apierrors.IsNotFound(err), errString(err)
	})
	waitFor(t, time.Minute, "the approved deletion audited", func() (bool, string) {
		rec := f.lastAudit("delete")
		return rec.Outcome == "deleted" && rec.Details["confirmResources"] == true, rec.Outcome
	})
}
