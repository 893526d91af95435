package main

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/internal/argodocs"
	"github.com/kubegitops/gitops/internal/testfiles"
)

// TestAppOfAppsBrowser: an app whose folder holds an Argo CD Application
// (Argo CD's CRD installed) shows that Application in its tree with a
// link to the child's page, the portal serving both; the link is reached
// from the keyboard and opens the child's page. After the parent's sync
// (the Application object created) the link is still there; a managed
// Application the portal does not serve gets no link.
func TestAppOfAppsBrowser(t *testing.T) {
	f := newFixture(t)
	testfiles.EnsureCRD(t, cluster.Config(), string(argodocs.ForTest(t).MustReadFile(t, "manifests/crds/application-crd.yaml")))
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	child := func(name string) []byte {
		return fmt.Appendf(nil, `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: %s}
spec:
  project: team-b
  source: {repoURL: %s, targetRevision: main, path: other}
  destination: {server: %s, namespace: %s}
`, name, f.repo, v1alpha1.KubernetesInternalAPIServerAddr, f.ns)
	}
	if _, err := f.git.Commit(ctx, "apps", "app of apps", map[string][]byte{"parent/child.yaml": child("child"), "parent/stranger.yaml": child("stranger")}); err != nil {
		t.Fatal(err)
	}
	for _, app := range []struct{ name, path string }{{"child", "other"}, {"parent", "parent"}} {
		code, _, raw := f.call("POST", "/api/v1/apps", tokAdmin, f.csrfOf(tokAdmin), map[string]any{"name": app.name, "project": "team-b",
			"repoURL": f.repo, "path": app.path, "cluster": v1alpha1.KubernetesInternalAPIServerAddr, "namespace": f.ns})
		if code != http.StatusCreated {
			t.Fatalf("create %s: %d %s", app.name, code, raw)
		}
	}
	// A hard refresh: the repository's branches were read before the commit.
	if code, _, raw := f.call("POST", "/api/v1/refresh", tokAdmin, f.csrfOf(tokAdmin), map[string]any{"apps": []string{"parent", "child"}, "hard": true}); code != http.StatusAccepted {
		t.Fatalf("refresh: %d %s", code, raw)
	}
	childKey := "argoproj.io/Application " + f.ns + "/child"
	strangerKey := "argoproj.io/Application " + f.ns + "/stranger"
	_, run := newBrowser(t, 3*time.Minute)
	loginAs(run, f.http.URL, tokAdmin)
	var href string
	var strangerLinks int
	run("parent", chromedp.Navigate(f.http.URL+"/apps/parent"),
		chromedp.WaitVisible(chromedp.CSS(`li.node[data-key="`+childKey+`"] a.child-app`)),
		into(&href, chromedp.Evaluate[string](`document.querySelector('li.node[data-key="`+childKey+`"] a.child-app').getAttribute("href")`)),
		into(&strangerLinks, chromedp.Evaluate[int](`document.querySelectorAll('li.node[data-key="`+strangerKey+`"] a.child-app').length`)))
	if href != "/apps/child" || strangerLinks != 0 {
		t.Errorf("parent's tree links child to %q and stranger %d times; want /apps/child and none", href, strangerLinks)
	}
	shotAt(t, run, "portal-app-of-apps.png")
	f.syncAndWait("parent", tokAdmin)
	var h1 string
	run("open child", chromedp.Navigate(f.http.URL+"/apps/parent"),
		chromedp.WaitVisible(chromedp.CSS(`li.node[data-key="`+childKey+`"] .badge[data-status="Synced"]`)),
		focusNow(`li.node[data-key="`+childKey+`"] a.child-app`), chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(chromedp.CSS(`#app[data-app="child"]`)), into(&h1, chromedp.Text(chromedp.CSS("h1"))))
	if h1 != "child" {
		t.Errorf("the link opened %q, want child's page", h1)
	}
}
