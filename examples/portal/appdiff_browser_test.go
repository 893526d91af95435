package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// handSecret is the value a person writes into the app's Secret by hand.
const handSecret = "typed-by-hand-s3cret"

// TestBrowserAppDiff changes a ConfigMap and a Secret of a synced app by
// hand and opens the app-wide diff: both objects in one view, unified and
// side by side, with neither Secret value anywhere on the page or in the
// API's answer (not even for a role that may read Secrets: the diffs are
// the engine's, masked there). A sync from the API then empties the open
// view without a reload.
func TestBrowserAppDiff(t *testing.T) {
	f := newFixture(t)
	f.syncAndWait("guestbook", tokAdmin)
	kctx, kcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer kcancel()
	ns := f.ns
	if _, err := f.kube.CoreV1().ConfigMaps(ns).Patch(kctx, "guestbook-config", types.MergePatchType,
		[]byte(`{"data":{"message":"changed by hand"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.kube.CoreV1().Secrets(ns).Patch(kctx, "guestbook-db", types.MergePatchType,
		[]byte(`{"stringData":{"password":"`+handSecret+`"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	cmKey, secKey := "ConfigMap "+ns+"/guestbook-config", "Secret "+ns+"/guestbook-db"
	waitFor(t, 60*time.Second, "both hand edits in the app diff", func() (bool, string) {
		_, _, raw := f.call("GET", "/api/v1/apps/guestbook/diff", tokSecretAdmin, "", nil)
		return contains(raw, cmKey) && contains(raw, secKey), raw
	})
	for _, tok := range []string{tokAdmin, tokSecretAdmin} {
		if _, _, raw := f.call("GET", "/api/v1/apps/guestbook/diff", tok, "", nil); contains(raw, secretValue) || contains(raw, handSecret) {
			t.Errorf("the app diff API shows a Secret value: %s", raw)
		}
	}

	ctx, run0 := newBrowser(t, 5*time.Minute)
	loginAs(run0, f.http.URL, tokAdmin)
	run := within(t, ctx, time.Minute)
	article := func(key string) string { return `#app-diff article.changed[data-key="` + key + `"]` }
	var unified string
	run("unified", chromedp.Navigate(f.http.URL+"/apps/guestbook"), chromedp.WaitVisible(chromedp.CSS("#app-diff-open")),
		chromedp.Click(chromedp.CSS("#app-diff-open")),
		chromedp.WaitVisible(chromedp.CSS(article(cmKey)+` span.add`)), chromedp.WaitVisible(chromedp.CSS(article(cmKey)+` span.del`)),
		chromedp.WaitVisible(chromedp.CSS(article(secKey)+` pre`)),
		into(&unified, chromedp.Text(chromedp.CSS("#app-diff-body"))))
	if !contains(unified, "changed by hand") || !contains(unified, "hello v1") {
		t.Errorf("the unified app diff lacks the ConfigMap's change:\n%s", unified)
	}
	var pairs [][]string
	run("side by side", chromedp.Click(chromedp.CSS(`[data-diff-mode="split"]`)),
		chromedp.WaitVisible(chromedp.CSS(article(cmKey)+` table.sbs td.add`)),
		into(&pairs, chromedp.Evaluate[[][]string](`Array.from(document.querySelectorAll('#app-diff table.sbs tr'))
			.filter(tr => tr.querySelector("td.del, td.add")).map(tr => Array.from(tr.cells).map(c => c.textContent))`)))
	paired := false
	for _, p := range pairs {
		paired = paired || (len(p) == 2 && contains(p[0], "changed by hand") && contains(p[1], "hello v1"))
	}
	if !paired {
		t.Errorf("side by side does not put the live message (left) and the desired one (right) on one row: %q", pairs)
	}
	viewShot(t, run, "#app-diff", "portal-app-diff.png")
	var html string
	run("page source", into(&html, chromedp.Evaluate[string](`document.documentElement.outerHTML`)))
	if strings.Contains(html, secretValue) || strings.Contains(html, handSecret) {
		t.Error("the page with the app diff holds a Secret value")
	}

	// After a sync the open view says there is nothing left, pushed.
	f.syncAndWait("guestbook", tokAdmin)
	run("after the sync", chromedp.WaitNotPresent(chromedp.CSS(article(cmKey))),
		chromedp.WaitVisible(chromedp.CSS(`#app-diff-body`)))
	var text string
	run("empty", into(&text, chromedp.Text(chromedp.CSS("#app-diff-body"))))
	if !contains(text, "No changed object") {
		t.Errorf("after the sync the app diff says %q", text)
	}
}
