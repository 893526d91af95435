package main

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSyncOptionsBrowser syncs guestbook from the dialog with Replace
// and a retry of 3: the live ConfigMap is then written by create/replace,
// not by the engine's default server-side apply (its managedFields hold no
// Apply), and the audit log
// records the options and the retry. Opening the dialog again shows the
// defaults, not the last choice. Through the API a malformed option or a
// bad backoff is 400 naming it, and a reader's sync with options is 403.
func TestSyncOptionsBrowser(t *testing.T) {
	f := newFixture(t)
	ctx, run0 := newBrowser(t, 5*time.Minute)
	loginAs(run0, f.http.URL, tokAdmin)
	run := within(t, ctx, 2*time.Minute)
	run("sync with options", chromedp.Navigate(f.http.URL+"/apps/guestbook"), clickNow("#sync"),
		chromedp.WaitVisible(chromedp.CSS("#sync-dialog")), clickNow("#opt-replace"), clickNow("#opt-retry"),
		typeNow("#opt-retry-limit", "3"), clickNow("#sync-go"),
		chromedp.WaitVisible(chromedp.CSS(`#sync-status .badge[data-status="Synced"]`)))
	f.waitOperation("guestbook")

	lctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cm, err := f.kube.CoreV1().ConfigMaps(f.ns).Get(lctx, "guestbook-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	applied := slices.ContainsFunc(cm.ManagedFields, func(m metav1.ManagedFieldsEntry) bool { return m.Operation == metav1.ManagedFieldsOperationApply })
	if applied || len(cm.ManagedFields) == 0 {
		t.Errorf("guestbook-config's managers %+v: want written by replace, not applied server-side", cm.ManagedFields)
	}
	var started *auditRecord
	for _, r := range f.auditRecords() {
		if r.Action == "sync" && r.App == "guestbook" && r.Outcome == "started" {
			started = &r
		}
	}
	if started == nil {
		t.Fatal("no sync of guestbook audited")
	}
	opts, _ := started.Details["syncOptions"].([]any)
	retry, _ := started.Details["retry"].(map[string]any)
	if len(opts) != 1 || opts[0] != "Replace=true" || retry["limit"] != float64(3) || retry["duration"] != "5s" {
		t.Errorf("the audited sync: %+v, want Replace=true and a retry of 3 by 5s", started.Details)
	}

	var ticked bool
	run("the dialog opens with its defaults", clickNow("#sync"), chromedp.WaitVisible(chromedp.CSS("#sync-dialog")),
		into(&ticked, chromedp.Evaluate[bool](`document.querySelector("#opt-replace").checked || document.querySelector("#opt-retry").checked || document.querySelector("#opt-retry-limit").value !== "2"`)))
	if ticked {
		t.Error("the sync dialog reopened with the last sync's options")
	}

	for _, c := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{"syncOptions": []string{"Replace=true,Force=true"}}, "syncOptions"},
		{map[string]any{"syncOptions": []string{"Replace"}}, "syncOptions"},
		{map[string]any{"retry": map[string]any{"limit": 2, "duration": "soon"}}, "retry.duration"},
	} {
		code, _, raw := f.call("POST", "/api/v1/apps/guestbook/sync", tokAdmin, f.csrfOf(tokAdmin), c.body)
		if code != http.StatusBadRequest || !strings.Contains(raw, c.want) {
			t.Errorf("sync %v: %d %s, want 400 naming %s", c.body, code, raw, c.want)
		}
	}
	code, _, raw := f.call("POST", "/api/v1/apps/guestbook/sync", tokReaderA, f.csrfOf(tokReaderA), map[string]any{"syncOptions": []string{"Replace=true"}})
	if code != http.StatusForbidden {
		t.Errorf("a reader's sync with options: %d %s, want 403", code, raw)
	}
}
