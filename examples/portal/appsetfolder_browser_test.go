package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// folderSetsFile is a file of ApplicationSets in an --apps folder: envs
// (a list generator, project team-a) runs; nodes (a clusters generator,
// project team-b) cannot run over a folder.
const folderSetsFile = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: envs}
spec:
  generators:
    - list:
        elements: [{env: dev}, {env: prod}]
  template:
    metadata: {name: 'envs-{{env}}'}
    spec:
      project: team-a
      source: {repoURL: REPO, targetRevision: main, path: other}
      destination: {server: https://kubernetes.default.svc, namespace: NS}
---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: nodes}
spec:
  generators:
    - clusters: {}
  template:
    metadata: {name: 'nodes-{{name}}'}
    spec:
      project: team-b
      source: {repoURL: REPO, targetRevision: main, path: other}
      destination: {server: '{{server}}', namespace: NS}
`

// appSetsOf reads GET /api/v1/applicationsets as token.
func (f *fixture) appSetsOf(token string) []appSetView {
	f.t.Helper()
	code, _, raw := f.call("GET", "/api/v1/applicationsets", token, "", nil)
	var got struct {
		Items []appSetView `json:"items"`
	}
	if code != 200 || json.Unmarshal([]byte(raw), &got) != nil {
		f.t.Fatalf("GET /api/v1/applicationsets: %d %s", code, raw)
	}
	return got.Items
}

// TestAppSetsFolderBrowser runs the ApplicationSets of an --apps folder:
// envs generates envs-dev and envs-prod, which the list shows (pushed)
// and the ApplicationSets page links, reached from the list with the
// keyboard; nodes, a clusters generator, is shown with the reason it does
// not run over a folder, and generates nothing. bob (team-a only) sees
// envs alone. After a restart of the portal the generated apps are served
// again.
func TestAppSetsFolderBrowser(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{AppDirFiles: map[string]string{"sets.yaml": folderSetsFile}})
	generated := func() (bool, string) {
		sets := f.appSetsOf(tokAdmin)
		b, _ := json.Marshal(sets)
		return len(sets) == 2 && strings.Join(sets[0].Apps, ",") == "envs-dev,envs-prod" && len(sets[1].Apps) == 0, string(b)
	}
	waitFor(t, time.Minute, "envs to generate its apps", generated)
	_, run := newBrowser(t, 4*time.Minute)
	loginAs(run, f.http.URL, tokAdmin)
	var apps, gens, conds, notRun, note string
	run("the generated apps in the list", chromedp.WaitVisible(chromedp.CSS(`tr[data-app="envs-dev"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-app="envs-prod"]`)))
	run("the sets from the list", focusNow("#appsets-link"), chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`#appset-envs .appset-apps a[href="/apps/envs-prod"]`)),
		into(&apps, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("#appset-envs .appset-apps a")).map((a) => a.getAttribute("href")).join(",")`)),
		into(&gens, chromedp.Text(chromedp.CSS("#appset-envs .generators"))),
		into(&conds, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("#appset-envs .appset-conditions tbody tr")).map((r) => r.dataset.type).join(",")`)),
		into(&notRun, chromedp.Text(chromedp.CSS("#appset-nodes .appset-not-run"))),
		into(&note, chromedp.Text(chromedp.CSS("#appsets-folder"))))
	shotAt(t, run, "portal-appsets-folder.png")
	if apps != "/apps/envs-dev,/apps/envs-prod" || gens != "list" || conds != "ResourcesUpToDate" {
		t.Errorf("envs: apps %q, generators %q, conditions %q; want both apps linked, list, ResourcesUpToDate", apps, gens, conds)
	}
	if !strings.Contains(notRun, "clusters generator") || !strings.Contains(notRun, "cluster Secrets") || !strings.Contains(note, "--apps folder") {
		t.Errorf("nodes says %q and the page %q: want the clusters generator named as not run over a folder", notRun, note)
	}
	var none int
	run("a generated app's page", chromedp.Evaluate[chromedp.Void](`document.querySelector('#appset-envs .appset-apps a[href="/apps/envs-dev"]').click()`),
		chromedp.WaitVisible(chromedp.CSS(`#app[data-app="envs-dev"]`)),
		chromedp.Navigate(f.http.URL+"/applicationsets"), chromedp.WaitVisible(chromedp.CSS("#appset-nodes")),
		into(&none, chromedp.Evaluate[int](`document.querySelectorAll("#appset-nodes .appset-apps a").length`)))
	if none != 0 {
		t.Errorf("nodes links %d apps, want none", none)
	}
	if bob := f.appSetsOf(tokReaderA); len(bob) != 1 || bob[0].Name != "envs" {
		t.Errorf("bob sees %+v, want envs alone", bob)
	}
	f.restart()
	waitFor(t, time.Minute, "envs to generate its apps after a restart", generated)
	if code, _, raw := f.call("GET", "/api/v1/apps/envs-prod", tokAdmin, "", nil); code != 200 {
		t.Errorf("envs-prod after a restart: %d %s", code, raw)
	}
}
