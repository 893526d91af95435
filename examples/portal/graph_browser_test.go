package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/kubegitops/gitops/appstatus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// maxViewScreenshot is the size a screenshot of a new view may have.
const maxViewScreenshot = 150 << 10

// viewShot takes a 1280x800 screenshot of the page scrolled to sel, checks
// its size, and writes it to docs/ with -screenshots.
func viewShot(t *testing.T, run func(string, ...chromedp.Action[chromedp.Void]), sel, name string) {
	t.Helper()
	var png []byte
	run("screenshot "+name, chromedp.EmulateViewport(1280, 800), chromedp.ScrollIntoView(chromedp.CSS(sel)),
		into(&png, chromedp.CaptureScreenshot()))
	if len(png) > maxViewScreenshot {
		t.Errorf("screenshot %s is %d bytes, more than %d", name, len(png), maxViewScreenshot)
	}
	if *writeScreenshots {
		if err := os.WriteFile(filepath.Join("..", "..", "docs", name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// within returns a runner like newBrowser's whose every call must finish
// within d, so that a step that never comes fails at once with the page's
// text.
func within(t *testing.T, ctx context.Context, d time.Duration) func(string, ...chromedp.Action[chromedp.Void]) {
	return func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		if err := chromedp.Do(c, actions...); err != nil {
			body, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
			t.Fatalf("%s: %v\npage text:\n%s", what, err, body)
		}
	}
}

// networkFiles are a Service selecting the guestbook's Pods and an Ingress
// in front of it.
var networkFiles = map[string][]byte{
	"guestbook/service.yaml": []byte(`apiVersion: v1
kind: Service
metadata: {name: guestbook-web}
spec:
  selector: {app: guestbook}
  ports: [{port: 80, targetPort: 8080}]
`),
	"guestbook/ingress.yaml": []byte(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: guestbook}
spec:
  rules:
    - host: guestbook.example
      http:
        paths:
          - path: /
            pathType: Prefix
            backend: {service: {name: guestbook-web, port: {number: 80}}}
`),
}

// TestBrowserGraph opens the graph view of a synced app with the keyboard:
// the Deployment -> ReplicaSet -> Pod chain is drawn left to right with
// its edges and badges, arrow keys move along it and Enter opens a node's
// panel, and a hand edit turns the ConfigMap's node OutOfSync without a
// reload. Then the network view draws Ingress -> Service -> Pod from the
// Ingress's backend and the Service's selector.
func TestBrowserGraph(t *testing.T) {
	f := newFixture(t)
	f.syncAndWait("guestbook", tokAdmin)
	ctx, run0 := newBrowser(t, 6*time.Minute)
	loginAs(run0, f.http.URL, tokAdmin)
	run := within(t, ctx, time.Minute)
	ns := f.ns
	gnode := func(key string) string { return `#graph g.gnode[data-key="` + key + `"]` }
	deploy, cm := "apps/Deployment "+ns+"/guestbook", "ConfigMap "+ns+"/guestbook-config"
	run("open the app", chromedp.Navigate(f.http.URL+"/apps/guestbook"),
		chromedp.WaitVisible(chromedp.CSS(`li.node[data-key="`+deploy+`"] li.node[data-key^="Pod "]`)))
	run("open the graph with the keyboard", focusNow(`[data-view="graph"]`), chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(gnode(deploy))),
		chromedp.WaitVisible(chromedp.CSS(`#graph path.gedge[data-from="`+deploy+`"][data-to^="apps/ReplicaSet "]`)),
		chromedp.WaitVisible(chromedp.CSS(`#graph path.gedge[data-from^="apps/ReplicaSet "][data-to^="Pod "]`)),
		chromedp.WaitVisible(chromedp.CSS(gnode(cm)+`[data-sync="Synced"]`)),
		chromedp.WaitVisible(chromedp.CSS(gnode(deploy)+`[data-sync="Synced"][data-health="Healthy"]`)))
	var listHidden bool
	var xs []float64
	run("layout", into(&listHidden, chromedp.Evaluate[bool](`document.getElementById("tree").hidden`)),
		into(&xs, chromedp.Evaluate[[]float64](`["apps/Deployment ", "apps/ReplicaSet ", "Pod "].map(p =>
			document.querySelector('#graph g.gnode[data-key^="' + p + '"]').transform.baseVal.consolidate().matrix.e)`)))
	if !listHidden {
		t.Error("the list stays shown with the graph")
	}
	if len(xs) != 3 || !(xs[0] < xs[1] && xs[1] < xs[2]) {
		t.Errorf("Deployment, ReplicaSet, Pod at x %v: want left to right", xs)
	}

	// Arrow right from the Deployment reaches its ReplicaSet; Enter opens it.
	var focused, title string
	run("keyboard", focusNow(gnode(deploy)), chromedp.KeyEvent(kb.ArrowRight),
		into(&focused, chromedp.Evaluate[string](`document.activeElement.dataset.key || ""`)),
		chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS("#panel")),
		into(&title, chromedp.Text(chromedp.CSS("#panel-title"))))
	if !contains(focused, "apps/ReplicaSet ") || title != focused {
		t.Errorf("arrow right then Enter focused %q and opened %q, want the Deployment's ReplicaSet", focused, title)
	}

	// A hand edit shows in the graph, pushed, without a reload.
	kctx, kcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer kcancel()
	if _, err := f.kube.CoreV1().ConfigMaps(ns).Patch(kctx, "guestbook-config", types.MergePatchType,
		[]byte(`{"data":{"message":"changed by hand"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
	defer wcancel()
	if err := chromedp.Do(wctx, chromedp.WaitVisible(chromedp.CSS(gnode(cm)+`[data-sync="OutOfSync"]`))); err != nil {
		t.Fatalf("a hand edit did not show in the graph within 5 s: %v", err)
	}
	viewShot(t, run, ".tree-section", "portal-graph.png")

	// The network view: a Service and an Ingress added in Git and synced.
	changes := map[string][]byte{}
	for p, b := range guestbookFiles("hello v1") {
		changes[p] = b
	}
	for p, b := range networkFiles {
		changes[p] = b
	}
	rev, err := f.git.Commit(kctx, "apps", "a Service and an Ingress", changes)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, raw := f.call("POST", "/api/v1/apps/guestbook/refresh", tokAdmin, f.csrfOf(tokAdmin), map[string]any{"hard": true}); code != 202 {
		t.Fatalf("hard refresh: %d %s", code, raw)
	}
	f.waitStatus("guestbook", func(st appstatus.Status) bool { return st.Revision == rev })
	if code, _, raw := f.call("POST", "/api/v1/apps/guestbook/sync", tokAdmin, f.csrfOf(tokAdmin), map[string]any{}); code != 202 {
		t.Fatalf("sync: %d %s", code, raw)
	}
	f.giveIngressAddress("guestbook")
	f.waitOperation("guestbook")
	f.waitStatus("guestbook", syncedHealthy)
	ing, svc := "networking.k8s.io/Ingress "+ns+"/guestbook", "Service "+ns+"/guestbook-web"
	run("network view", chromedp.Click(chromedp.CSS(`[data-view="network"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#network path.gedge[data-from="`+ing+`"][data-to="`+svc+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#network path.gedge[data-from="`+svc+`"][data-to^="Pod "]`)))
	var cols []string
	run("network columns", into(&cols, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#network g.gnode"))
		.sort((a, b) => a.transform.baseVal.consolidate().matrix.e - b.transform.baseVal.consolidate().matrix.e)
		.map(g => g.dataset.key.split(" ")[0])`)))
	if len(cols) < 3 || cols[0] != "networking.k8s.io/Ingress" || cols[1] != "Service" || cols[len(cols)-1] != "Pod" {
		t.Errorf("network columns %v: want Ingress, Service, then Pods", cols)
	}
	viewShot(t, run, ".tree-section", "portal-network.png")
}

// giveIngressAddress plays the ingress controller: once the app's Ingress
// exists it gets a load balancer address, so that it turns Healthy.
func (f *fixture) giveIngressAddress(name string) {
	f.t.Helper()
	waitFor(f.t, 60*time.Second, "Ingress "+name+" to get an address", func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ing, err := f.kube.NetworkingV1().Ingresses(f.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if len(ing.Status.LoadBalancer.Ingress) > 0 {
			return true, ""
		}
		_, err = f.kube.NetworkingV1().Ingresses(f.ns).Patch(ctx, name, types.MergePatchType,
			[]byte(`{"status":{"loadBalancer":{"ingress":[{"ip":"10.0.0.1"}]}}}`), metav1.PatchOptions{}, "status")
		return false, fmt.Sprint(err)
	})
}
