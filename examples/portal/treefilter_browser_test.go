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

// TestTreeFiltersBrowser filters guestbook's resource list in headless
// Chromium: by kind (Deployment alone among the roots), by name (the
// ConfigMap), and by sync status after the ConfigMap is changed by hand:
// OutOfSync shows the ConfigMap alone, and still after the pushed page
// patched the tree; clearing the filters shows every root again.
func TestTreeFiltersBrowser(t *testing.T) {
	f := newFixture(t)
	f.syncAndWait("guestbook", tokAdmin)
	_, run := newBrowser(t, 4*time.Minute)
	loginAs(run, f.http.URL, tokAdmin)
	visible := func(dst *[]string) chromedp.Action[chromedp.Void] {
		return into(dst, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#tree > li.node")).filter((li) => !li.hidden).map((li) => li.dataset.key)`))
	}
	dep := "apps/Deployment " + f.ns + "/guestbook"
	cm := "ConfigMap " + f.ns + "/guestbook-config"
	var set bool
	// setFilter sets a filter as a person's choice does (a change event).
	setFilter := func(id, value string) chromedp.Action[chromedp.Void] {
		return into(&set, chromedp.Evaluate[bool](`(() => { const e = document.querySelector("`+id+`"); e.value = "`+value+`"; e.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`))
	}
	var all, byKind, byName []string
	run("kind", chromedp.Navigate(f.http.URL+"/apps/guestbook"), chromedp.WaitVisible(chromedp.CSS(`li.node[data-key="`+dep+`"]`)), visible(&all),
		setFilter("#tree-filter-kind", "Deployment"), visible(&byKind),
		setFilter("#tree-filter-kind", ""), chromedp.SendKeys(chromedp.CSS("#tree-filter-name"), "guestbook-con"), visible(&byName))
	if len(all) < 3 || strings.Join(byKind, ",") != dep || strings.Join(byName, ",") != cm {
		t.Errorf("roots %v; by kind Deployment %v, want [%s]; by name %v, want [%s]", all, byKind, dep, byName, cm)
	}
	kctx, kcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer kcancel()
	if _, err := f.kube.CoreV1().ConfigMaps(f.ns).Patch(kctx, "guestbook-config", types.MergePatchType,
		[]byte(`{"data":{"message":"changed by hand"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	var bySync, cleared []string
	run("sync", setFilter("#tree-filter-name", ""), setFilter("#tree-filter-sync", "OutOfSync"),
		chromedp.WaitVisible(chromedp.CSS(`li.node[data-key="`+cm+`"] .badge[data-status="OutOfSync"]`)),
		chromedp.Poll[chromedp.Void](`Array.from(document.querySelectorAll("#tree > li.node")).filter((li) => !li.hidden).length === 1`), visible(&bySync))
	shotAt(t, run, "portal-tree-filters.png")
	run("clear", setFilter("#tree-filter-sync", ""), visible(&cleared))
	if strings.Join(bySync, ",") != cm || len(cleared) != len(all) {
		t.Errorf("OutOfSync shows %v, want [%s]; cleared shows %d roots, want %d", bySync, cm, len(cleared), len(all))
	}
}
