package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRBACReloadBrowser reads argocd-rbac-cm from the cluster (as
// --rbac-namespace) and changes it while the portal runs: alice's role
// loses sync on team-a by a deny line, and without a restart the API
// refuses her sync (403) and the app page shows her no Sync button. Then
// the line is taken out again and her Sync button is back.
func TestRBACReloadBrowser(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{RBACConfigMap: fixtureRBAC, Projects: fixtureRBACProjects, RBACNamespace: true})
	_, run := newBrowser(t, 4*time.Minute)
	loginAs(run, f.http.URL, tokAdmin)
	var buttons int
	run("sync button", chromedp.Navigate(f.http.URL+"/apps/guestbook"), chromedp.WaitVisible(chromedp.CSS("#tree")),
		into(&buttons, chromedp.Evaluate[int](`document.querySelectorAll("#sync").length`)))
	if buttons != 1 {
		t.Fatalf("alice sees %d Sync buttons before the change, want 1", buttons)
	}
	setPolicy := func(extra string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cms := f.kube.CoreV1().ConfigMaps(f.ns)
		cm, err := cms.Get(ctx, rbacConfigMapName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		base := cm.Data["policy.csv"]
		if i := strings.Index(base, "# live\n"); i >= 0 {
			base = base[:i]
		}
		cm.Data["policy.csv"] = base + "# live\n" + extra
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setPolicy("p, role:deployer, applications, sync, team-a/*, deny\n")
	csrf := f.csrfOf(tokAdmin)
	waitFor(t, 10*time.Second, "alice's sync refused after the ConfigMap change", func() (bool, string) {
		code, _, raw := f.call("POST", "/api/v1/apps/guestbook/sync", tokAdmin, csrf, map[string]any{"dryRun": true})
		if code == http.StatusAccepted {
			f.waitOperation("guestbook")
		}
		return code == http.StatusForbidden, raw
	})
	run("no sync button", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#tree")),
		into(&buttons, chromedp.Evaluate[int](`document.querySelectorAll("#sync").length`)))
	if buttons != 0 {
		t.Errorf("alice sees %d Sync buttons after losing sync, want 0", buttons)
	}
	// The step after: the deny line goes, sync comes back.
	setPolicy("")
	waitFor(t, 10*time.Second, "alice's Sync button back", func() (bool, string) {
		code, out, raw := f.call("GET", "/api/v1/apps/guestbook/permissions", tokAdmin, "", nil)
		return code == http.StatusOK && out["sync"] == true, raw
	})
	run("sync button back", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#sync")))
}
