package main

import (
	"context"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestManageBrowser creates and deletes in headless Chromium on the local
// cluster, as alice (admin): the create dialog makes an automated app that
// appears in the list and turns Synced there by the pushed stream; a
// resource of guestbook is deleted after its name is typed; guestbook is
// deleted with foreground cascade after its name is typed (the Delete
// button stays disabled until then), its objects go, and the page returns
// to a list without it; the created app, deleted through the API while
// the list is open, leaves the list without a reload. bob (readonly) is
// refused both (403), audited.
func TestManageBrowser(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	if _, err := f.git.Commit(ctx, "apps", "third", map[string][]byte{"third/configmap.yaml": []byte(
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: third-config}\ndata: {n: \"3\"}\n")}); err != nil {
		t.Fatal(err)
	}
	f.syncAndWait("guestbook", tokAdmin)
	_, run := newBrowser(t, 5*time.Minute)
	loginAs(run, f.http.URL, tokAdmin)

	// Create: the row appears, and the automated sync turns it Synced by
	// the list's stream.
	run("create", chromedp.Click(chromedp.CSS("#new-app")), chromedp.WaitVisible(chromedp.CSS("#create-dialog")),
		chromedp.SendKeys(chromedp.CSS("#create-name"), "third"),
		chromedp.SetValue(chromedp.CSS("#create-project"), "team-b"),
		chromedp.SendKeys(chromedp.CSS("#create-repo"), f.repo),
		chromedp.SendKeys(chromedp.CSS("#create-path"), "third"),
		chromedp.SendKeys(chromedp.CSS("#create-cluster"), v1alpha1.KubernetesInternalAPIServerAddr),
		chromedp.SendKeys(chromedp.CSS("#create-namespace"), f.ns),
		chromedp.Click(chromedp.CSS("#create-automated")))
	shotAt(t, run, "portal-create.png")
	run("created", chromedp.Click(chromedp.CSS("#create-go")),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-app="third"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-app="third"] .badge[data-status="Synced"]`)))
	if _, err := f.kube.CoreV1().ConfigMaps(f.ns).Get(ctx, "third-config", metav1.GetOptions{}); err != nil {
		t.Errorf("the created app's ConfigMap: %v", err)
	}

	// Delete one resource of guestbook.
	cmKey := "ConfigMap " + f.ns + "/guestbook-config"
	var goDisabled bool
	run("delete resource", chromedp.Navigate(f.http.URL+"/apps/guestbook"),
		chromedp.Click(chromedp.CSS(`button.open-node[data-key="`+cmKey+`"]`)),
		chromedp.WaitEnabled(chromedp.CSS("#delete-resource")), chromedp.Click(chromedp.CSS("#delete-resource")),
		chromedp.WaitVisible(chromedp.CSS("#delete-resource-dialog")),
		chromedp.SendKeys(chromedp.CSS("#delete-resource-confirm"), "guestbook"),
		into(&goDisabled, chromedp.Evaluate[bool](`document.querySelector("#delete-resource-go").disabled`)),
		chromedp.SendKeys(chromedp.CSS("#delete-resource-confirm"), "-config"),
		chromedp.Click(chromedp.CSS("#delete-resource-go")),
		chromedp.Poll[chromedp.Void](`document.querySelector("#notice").textContent.startsWith("Deleted ConfigMap")`))
	if !goDisabled {
		t.Error("resource Delete enabled before the resource's name was typed")
	}
	waitFor(t, 30*time.Second, "guestbook-config deleted", func() (bool, string) {
		_, err := f.kube.CoreV1().ConfigMaps(f.ns).Get(ctx, "guestbook-config", metav1.GetOptions{})
		return apierrors.IsNotFound(err), errString(err)
	})

	// Refusals: bob may not delete or create; a wrong typed name is 400.
	code, _, raw := f.call("POST", "/api/v1/apps/guestbook/delete", tokReaderA, f.csrfOf(tokReaderA), map[string]any{"confirm": "guestbook"})
	if code != http.StatusForbidden {
		t.Errorf("bob deletes guestbook: %d %s, want 403", code, raw)
	}
	code, _, raw = f.call("POST", "/api/v1/apps", tokReaderA, f.csrfOf(tokReaderA), map[string]any{"name": "x", "project": "team-a",
		"repoURL": f.repo, "path": "third", "cluster": v1alpha1.KubernetesInternalAPIServerAddr, "namespace": f.ns})
	if code != http.StatusForbidden {
		t.Errorf("bob creates an app: %d %s, want 403", code, raw)
	}
	code, _, raw = f.call("POST", "/api/v1/apps/guestbook/delete", tokAdmin, f.csrfOf(tokAdmin), map[string]any{"confirm": "guestbok"})
	if code != http.StatusBadRequest || !strings.Contains(raw, "type the application's name") {
		t.Errorf("delete with a mistyped name: %d %s, want 400", code, raw)
	}

	// Delete guestbook, foreground: the page returns to the list once the
	// stream says it is gone.
	run("delete app", chromedp.Click(chromedp.CSS("#delete-app")), chromedp.WaitVisible(chromedp.CSS("#delete-app-dialog")),
		into(&goDisabled, chromedp.Evaluate[bool](`document.querySelector("#delete-app-go").disabled`)),
		chromedp.SendKeys(chromedp.CSS("#delete-app-confirm"), "guestbook"))
	if !goDisabled {
		t.Error("app Delete enabled before the app's name was typed")
	}
	shotAt(t, run, "portal-delete.png")
	run("deleted", chromedp.Click(chromedp.CSS("#delete-app-go")),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-app="third"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`tr[data-app="guestbook"]`)))
	waitFor(t, 60*time.Second, "guestbook's Deployment deleted", func() (bool, string) {
		_, err := f.kube.AppsV1().Deployments(f.ns).Get(ctx, "guestbook", metav1.GetOptions{})
		return apierrors.IsNotFound(err), errString(err)
	})

	// The created app, deleted (non-cascading) while the list is open,
	// leaves it without a reload; its ConfigMap stays.
	code, _, raw = f.call("POST", "/api/v1/apps/third/delete", tokAdmin, f.csrfOf(tokAdmin), map[string]any{"cascade": "non-cascading", "confirm": "third"})
	if code != http.StatusAccepted {
		t.Fatalf("delete third: %d %s", code, raw)
	}
	run("gone", chromedp.WaitNotPresent(chromedp.CSS(`tr[data-app="third"]`)))
	if _, err := f.kube.CoreV1().ConfigMaps(f.ns).Get(ctx, "third-config", metav1.GetOptions{}); err != nil {
		t.Errorf("non-cascading deletion took the ConfigMap: %v", err)
	}
	if a := f.audit.String(); !strings.Contains(a, `"action":"create"`) || !strings.Contains(a, `"outcome":"deleted"`) ||
		!strings.Contains(a, `"user":"bob"`) {
		t.Errorf("audit lacks the create, the deletions or bob's refusals: %s", a)
	}
}

func errString(err error) string {
	if err == nil {
		return "exists"
	}
	return err.Error()
}
