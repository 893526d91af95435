package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// bigAppFiles are the 200 resources of the app "big": 170 ConfigMaps, 20
// Secrets, a Deployment of 8 replicas (its ReplicaSet and 8 Pods).
func bigAppFiles() map[string][]byte {
	files := map[string][]byte{}
	var cms, secs strings.Builder
	for i := range 170 {
		fmt.Fprintf(&cms, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: big-config-%03d}\ndata: {index: \"%d\"}\n", i, i)
	}
	for i := range 20 {
		fmt.Fprintf(&secs, "---\napiVersion: v1\nkind: Secret\nmetadata: {name: big-secret-%02d}\nstringData: {value: \"v%d\"}\n", i, i)
	}
	files["big/configmaps.yaml"] = []byte(cms.String())
	files["big/secrets.yaml"] = []byte(secs.String())
	files["big/deployment.yaml"] = []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: big}
spec:
  replicas: 8
  selector: {matchLabels: {app: big}}
  template:
    metadata: {labels: {app: big}}
    spec:
      containers: [{name: web, image: registry.k8s.io/pause:3.10}]
`)
	return files
}

// readyScript runs at the start of each document: it records in
// window.portalReadyAt (ms since the navigation started) the moment the
// page's ready condition first holds after its scripts' DOMContentLoaded
// work, for the pages TestPageLoad1000AppsBrowser measures.
const readyScript = `(() => {
  const ready = {
    "/": () => !!document.querySelector('tr[data-app="app-0049"]'),
    "/apps/big": () => document.querySelectorAll("#tree li.node").length >= 200,
    "/apps/big?view=graph": () => !!document.querySelector('#graph g.ggroup[data-count="170"]') && !!document.querySelector('#graph g.ggroup[data-count="8"]'),
    "/apps/big?view=graph&group=off": () => document.querySelectorAll("#graph g.gnode").length >= 201,
  }[location.pathname + location.search];
  if (!ready) return;
  let scripts = false;
  const check = () => {
    if (!scripts || window.portalReadyAt !== undefined || !ready()) return;
    window.portalReadyAt = performance.now();
  };
  new MutationObserver(check).observe(document, {childList: true, subtree: true});
  document.addEventListener("DOMContentLoaded", () => setTimeout(() => { scripts = true; check(); }, 0));
})();`

// TestPageLoad1000AppsBrowser measures in headless Chromium, with 1,000
// apps served (999 to an offline destination, benchPortal's, and "big":
// 200 resources synced to the test cluster), the time from the navigation
// to each page's ready condition (readyScript), the median of 7 loads: the
// list (its first page of 50 rows), big's app page (its 200 resources in
// the tree) and big's graph, grouped (the default: 170 ConfigMaps, 20
// Secrets and 8 Pods each one node) and with every node drawn. It fails
// when a page never gets ready; the figures are its measure: lines.
func TestPageLoad1000AppsBrowser(t *testing.T) {
	ns := cluster.TestNamespace(t)
	big := "---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: big}\n" +
		"spec:\n  project: default\n  source: {repoURL: DIR, path: big}\n  destination: {server: " + v1alpha1.KubernetesInternalAPIServerAddr + ", namespace: " + ns + "}\n"
	p := benchPortalWith(t, 999, benchExtra{apps: big, files: bigAppFiles(),
		clusters: []gitops.ClusterConfig{{Name: v1alpha1.KubernetesInClusterName, Server: v1alpha1.KubernetesInternalAPIServerAddr, Config: cluster.Config()}}})
	key := v1alpha1.AppKey{Name: "big"}
	a, ok := p.srv.app("big")
	if !ok {
		t.Fatal("big is not served")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := p.engine.Sync(ctx, a, gitops.SyncRequest{}); err != nil {
		t.Fatalf("sync big: %v", err)
	}
	waitFor(t, 2*time.Minute, "big Synced and Healthy with its 200 resources", func() (bool, string) {
		st, _ := p.engine.Apps().AppStatus(key)
		n := 0
		tctx, tcancel := context.WithTimeout(ctx, 10*time.Second)
		defer tcancel()
		if tree, _, err := p.engine.ResourceTree(tctx, a); err == nil {
			n = len(tree.Nodes)
		}
		return syncedHealthy(st) && n >= 200, fmt.Sprintf("%s %s, %d nodes", st.Sync, st.Health.Code, n)
	})
	srv := httptest.NewServer(p.srv)
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	hs := srv.URL
	_, run := newBrowser(t, 5*time.Minute)
	run("ready script", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: readyScript})
		return err
	}))
	run("login", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(hs+"/login"), chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), tokAdmin), chromedp.Click(chromedp.CSS("#login")),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-app="app-0000"]`)))
	const loads = 7
	for _, path := range []string{"/", "/apps/big", "/apps/big?view=graph", "/apps/big?view=graph&group=off"} {
		var ready, loaded, api []float64
		for range loads {
			var at, load, call float64
			run("load "+path, chromedp.Navigate(hs+path),
				into(&at, chromedp.Poll[float64](`window.portalReadyAt`, chromedp.WithPollingTimeout(30*time.Second))),
				into(&load, chromedp.Evaluate[float64](`performance.getEntriesByType("navigation")[0].loadEventEnd`)),
				// the graph's read of the app's API, when it made one
				into(&call, chromedp.Evaluate[float64](`(performance.getEntriesByType("resource").find((e) => e.name.endsWith("/api/v1/apps/big")) || {duration: 0}).duration`)))
			ready, loaded, api = append(ready, at), append(loaded, load), append(api, call)
		}
		slices.Sort(ready)
		slices.Sort(loaded)
		slices.Sort(api)
		t.Logf("measure: %s with 1,000 apps: ready in %.0f ms (median of %d; %.0f to %.0f), load event at %.0f ms, app API read %.0f ms",
			path, ready[loads/2], loads, ready[0], ready[loads-1], loaded[loads/2], api[loads/2])
	}
}
