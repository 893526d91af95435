package main

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestResourceDeleteBrowser drives the app page in headless Chromium as
// dave, whose role may delete the ConfigMaps of team-a's apps (Argo CD 3's
// "delete//ConfigMap/*/*") but not the apps: the page offers no Delete
// application; Delete resource is enabled for the ConfigMap, disabled for
// the Deployment (saying why), and enabled again for the ConfigMap, which
// the dialog then deletes.
func TestResourceDeleteBrowser(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{RBACConfigMap: resourceDeleteRBAC, Projects: fixtureRBACProjects})
	f.syncAndWait("guestbook", tokAdmin)
	_, run := newBrowser(t, 4*time.Minute)
	loginAs(run, f.http.URL, tokSecretAdmin)
	cmKey, depKey := "ConfigMap "+f.ns+"/guestbook-config", "apps/Deployment "+f.ns+"/guestbook"
	var appButtons int
	run("app page", chromedp.Navigate(f.http.URL+"/apps/guestbook"),
		chromedp.WaitVisible(chromedp.CSS(`li.node[data-key="`+depKey+`"]`)),
		into(&appButtons, chromedp.Evaluate[int](`document.querySelectorAll("#delete-app").length`)))
	if appButtons != 0 {
		t.Errorf("dave (no delete on the app) sees %d Delete application buttons, want none", appButtons)
	}
	run("the ConfigMap may go", chromedp.Click(chromedp.CSS(`button.open-node[data-key="`+cmKey+`"]`)),
		chromedp.WaitEnabled(chromedp.CSS("#delete-resource")))
	run("the Deployment may not", chromedp.Click(chromedp.CSS(`button.open-node[data-key="`+depKey+`"]`)),
		chromedp.Poll[chromedp.Void](`document.querySelector("#delete-resource").disabled && `+
			`document.querySelector("#delete-resource").title === "your role may not delete `+depKey+`"`))
	run("delete the ConfigMap", chromedp.Click(chromedp.CSS(`button.open-node[data-key="`+cmKey+`"]`)),
		chromedp.WaitEnabled(chromedp.CSS("#delete-resource")), chromedp.Click(chromedp.CSS("#delete-resource")),
		chromedp.WaitVisible(chromedp.CSS("#delete-resource-dialog")),
		chromedp.SendKeys(chromedp.CSS("#delete-resource-confirm"), "guestbook-config"),
		chromedp.Click(chromedp.CSS("#delete-resource-go")),
		chromedp.Poll[chromedp.Void](`document.querySelector("#notice").textContent.startsWith("Deleted ConfigMap")`))
	waitFor(t, 30*time.Second, "guestbook-config deleted", func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := f.kube.CoreV1().ConfigMaps(f.ns).Get(ctx, "guestbook-config", metav1.GetOptions{})
		return apierrors.IsNotFound(err), errString(err)
	})
}
