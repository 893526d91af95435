package main

import (
	"context"
	"math"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// graphView is what a test reads of the graph box: the zoom level, the
// SVG's drawn width and its own (viewBox) width, and the scroll position.
type graphView struct {
	Zoom   float64 `json:"zoom"`
	Width  float64 `json:"width"`
	Base   float64 `json:"base"`
	Left   float64 `json:"left"`
	BoxW   float64 `json:"boxW"`
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Height float64 `json:"height"`
}

const readGraphView = `(() => { const b = document.getElementById("graph"), s = b.querySelector("svg.graph"), r = b.getBoundingClientRect();
	return {zoom: Number(b.dataset.zoom), width: Number(s.getAttribute("width")), base: s.viewBox.baseVal.width,
		left: b.scrollLeft, boxW: b.clientWidth, x: r.left, y: r.top, height: r.height}; })()`

// graphKeys are the keys of the graph's nodes, sorted (the app's own
// node is "").
const graphKeys = `Array.from(document.querySelectorAll("#graph g.gnode")).map((g) => g.dataset.key).sort()`

// editConfigMapByHand changes guestbook's ConfigMap in the cluster, which
// turns its node OutOfSync and pushes a new page.
func (f *fixture) editConfigMapByHand() {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := f.kube.CoreV1().ConfigMaps(f.ns).Patch(ctx, "guestbook-config", types.MergePatchType,
		[]byte(`{"data":{"message":"changed by hand"}}`), metav1.PatchOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

// TestGraphZoomBrowser zooms guestbook's graph with the keys (+ twice),
// the toolbar (zoom out) and Ctrl+wheel, pans it by dragging, and checks
// that a pushed page (a hand edit of the ConfigMap) redraws the graph at
// the same zoom and scroll position; then 0 fits the graph in the box. The
// graph is opened by the URL's view parameter.
func TestGraphZoomBrowser(t *testing.T) {
	f := newFixture(t)
	f.syncAndWait("guestbook", tokAdmin)
	ctx, run0 := newBrowser(t, 5*time.Minute)
	loginAs(run0, f.http.URL, tokAdmin)
	run := within(t, ctx, time.Minute)
	deploy, cm := "apps/Deployment "+f.ns+"/guestbook", "ConfigMap "+f.ns+"/guestbook-config"
	gnode := func(key string) string { return `#graph g.gnode[data-key="` + key + `"]` }
	var v0, v1, v2, v3 graphView
	run("open the graph from the URL", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(f.http.URL+"/apps/guestbook?view=graph"),
		chromedp.WaitVisible(chromedp.CSS(gnode(deploy)+`[data-health="Healthy"]`)), chromedp.WaitVisible(chromedp.CSS("#graph-tools")),
		into(&v0, chromedp.Evaluate[graphView](readGraphView)))
	if v0.Zoom != 1 || v0.Width != v0.Base {
		t.Fatalf("the graph opens at %+v, want zoom 1 at its own width", v0)
	}
	run("+ twice", focusNow(gnode(deploy)), chromedp.KeyEvent("+"), chromedp.KeyEvent("+"),
		chromedp.Poll[chromedp.Void](`document.getElementById("graph").dataset.zoom === "1.563"`),
		into(&v1, chromedp.Evaluate[graphView](readGraphView)))
	if math.Abs(v1.Width-v1.Base*1.5625) > 1 {
		t.Errorf("at zoom %v the graph is %v wide, want %v", v1.Zoom, v1.Width, v1.Base*1.5625)
	}
	var level string
	run("zoom out button", chromedp.Click(chromedp.CSS("#graph-zoom-out")),
		chromedp.Poll[chromedp.Void](`document.getElementById("graph").dataset.zoom === "1.25"`),
		into(&level, chromedp.Text(chromedp.CSS("#graph-zoom-level"))))
	if level != "125 %" {
		t.Errorf("zoom level reads %q, want 125 %%", level)
	}
	// (the protocol wants both deltas, and drops a zero one)
	wheelUp := func(p *input.DispatchMouseEventParams) { p.DeltaX, p.DeltaY = 0.01, -120 }
	run("ctrl+wheel", chromedp.MouseEvent(input.DispatchMouseEventTypeMouseWheel, v1.X+300, v1.Y+60, chromedp.ButtonModifiers(chromedp.ModifierCtrl), wheelUp),
		chromedp.Poll[chromedp.Void](`document.getElementById("graph").dataset.zoom === "1.563"`))
	// A drag from right to left pans the wide graph to the right (the box
	// where it is now: a click or a focus may have scrolled the page).
	var at graphView
	run("before the drag", chromedp.Evaluate[chromedp.Void](`document.getElementById("graph").scrollIntoView({block: "start"})`),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("graph").scrollLeft = 0`),
		into(&at, chromedp.Evaluate[graphView](readGraphView)))
	x, y := at.X+600, at.Y+30
	held := func(p *input.DispatchMouseEventParams) { p.Button, p.Buttons = input.MouseButtonLeft, 1 }
	run("drag", chromedp.MouseEvent(chromedp.MousePressed, x, y, held, chromedp.ClickCount(1)),
		chromedp.MouseEvent(chromedp.MouseMoved, x-100, y, held),
		chromedp.MouseEvent(chromedp.MouseMoved, x-200, y, held),
		chromedp.MouseEvent(chromedp.MouseReleased, x-200, y, chromedp.ButtonType(input.MouseButtonLeft), chromedp.ClickCount(1)),
		into(&v2, chromedp.Evaluate[graphView](readGraphView)))
	if v2.Left < 150 {
		t.Errorf("a drag of 200 px to the left from %+v scrolled the graph to %+v, want about 200", at, v2)
	}
	f.editConfigMapByHand()
	run("a pushed page", chromedp.WaitVisible(chromedp.CSS(gnode(cm)+`[data-sync="OutOfSync"]`)),
		into(&v3, chromedp.Evaluate[graphView](readGraphView)))
	if v3.Zoom != v2.Zoom || math.Abs(v3.Width-v3.Base*1.5625) > 1 || math.Abs(v3.Left-v2.Left) > 1 {
		t.Errorf("after a pushed page the graph is %+v, want the zoom and scroll of %+v", v3, v2)
	}
	var fit graphView
	run("fit", focusNow(gnode(cm)), chromedp.KeyEvent("0"),
		chromedp.Poll[chromedp.Void](`Number(document.getElementById("graph").dataset.zoom) < 1.5`),
		into(&fit, chromedp.Evaluate[graphView](readGraphView)))
	if fit.Zoom > 1 || fit.Width > fit.BoxW {
		t.Errorf("fit gives %+v, want the graph within the box's width", fit)
	}
}

// TestGraphGroupsBrowser scales guestbook's Deployment to 3 replicas: the
// graph shows one group node "3 Pods" under the ReplicaSet; Enter expands
// it into the 3 Pods (the focus on the first), which stay expanded after a
// pushed page; the "Group nodes" toggle off and on shows each Pod and then
// the group again, and a click expands it.
func TestGraphGroupsBrowser(t *testing.T) {
	f := newFixture(t)
	f.syncAndWait("guestbook", tokAdmin)
	kctx, kcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer kcancel()
	if _, err := f.kube.AppsV1().Deployments(f.ns).Patch(kctx, "guestbook", types.MergePatchType,
		[]byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, run0 := newBrowser(t, 5*time.Minute)
	loginAs(run0, f.http.URL, tokAdmin)
	run := within(t, ctx, 2*time.Minute)
	const group = `#graph g.ggroup[data-group="Pod"][data-count="3"]`
	const pods = `Array.from(document.querySelectorAll('#graph g.gnode[data-key^="Pod "]')).length`
	var name, label string
	var n int
	run("the group", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(f.http.URL+"/apps/guestbook"),
		chromedp.Click(chromedp.CSS(`[data-view="graph"]`)), chromedp.WaitVisible(chromedp.CSS(group)),
		into(&name, chromedp.Evaluate[string](`document.querySelector('`+group+` .gname').textContent`)), into(&label, chromedp.Evaluate[string](`document.querySelector('`+group+`').getAttribute("aria-label")`)),
		into(&n, chromedp.Evaluate[int](pods)))
	if name != "3 Pods" || n != 0 || !strings.Contains(label, "grouped") {
		t.Errorf("group node %q (%q) with %d Pod nodes beside it, want \"3 Pods\" alone", name, label, n)
	}
	edge := `#graph path.gedge[data-from^="apps/ReplicaSet "][data-to^="group:"]`
	run("the group hangs from the ReplicaSet", chromedp.WaitVisible(chromedp.CSS(edge)))
	viewShot(t, run, ".tree-section", "portal-graph-groups.png")
	var focused string
	run("Enter expands", focusNow(group), chromedp.KeyEvent(kb.Enter),
		chromedp.Poll[chromedp.Void](pods+` === 3`), chromedp.WaitNotPresent(chromedp.CSS("#graph g.ggroup")),
		into(&focused, chromedp.Evaluate[string](`document.activeElement.dataset.key || ""`)))
	if !strings.HasPrefix(focused, "Pod ") {
		t.Errorf("after Enter the focus is on %q, want the first Pod", focused)
	}
	f.editConfigMapByHand()
	run("still expanded after a pushed page", chromedp.WaitVisible(chromedp.CSS(`#graph g.gnode[data-key="ConfigMap `+f.ns+`/guestbook-config"][data-sync="OutOfSync"]`)),
		into(&n, chromedp.Evaluate[int](pods)))
	if n != 3 {
		t.Errorf("%d Pod nodes after a pushed page, want the 3 expanded", n)
	}
	run("toggle off and on", chromedp.Click(chromedp.CSS("#graph-group")), chromedp.Poll[chromedp.Void](pods+` === 3`),
		chromedp.Click(chromedp.CSS("#graph-group")), chromedp.WaitVisible(chromedp.CSS(group)), into(&n, chromedp.Evaluate[int](pods)))
	if n != 0 {
		t.Errorf("grouping on again shows %d Pod nodes, want the group alone", n)
	}
	run("a click expands", chromedp.Click(chromedp.CSS(group)), chromedp.Poll[chromedp.Void](pods+` === 3`))
}

// TestGraphFiltersBrowser filters the graph with the app page's resource
// filters: a link with kind=Deployment opens the graph with the
// Deployment alone and the list filtered alike; a name typed in
// the graph view keeps the ConfigMap alone and goes to the URL; after a
// hand edit, sync=OutOfSync keeps the ConfigMap alone, and that URL opened
// afresh shows the same graph and the same filters.
func TestGraphFiltersBrowser(t *testing.T) {
	f := newFixture(t)
	f.syncAndWait("guestbook", tokAdmin)
	ctx, run0 := newBrowser(t, 5*time.Minute)
	loginAs(run0, f.http.URL, tokAdmin)
	run := within(t, ctx, time.Minute)
	deploy, cm := "apps/Deployment "+f.ns+"/guestbook", "ConfigMap "+f.ns+"/guestbook-config"
	var set bool
	setFilter := func(id, value string) chromedp.Action[chromedp.Void] {
		return into(&set, chromedp.Evaluate[bool](`(() => { const e = document.querySelector("`+id+`"); e.value = "`+value+`"; e.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`))
	}
	var keys, roots []string
	var kind, search string
	run("a link filtered by kind", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(f.http.URL+"/apps/guestbook?view=graph&kind=Deployment"),
		chromedp.WaitVisible(chromedp.CSS(`#graph g.gnode[data-key="`+deploy+`"]`)),
		into(&keys, chromedp.Evaluate[[]string](graphKeys)), into(&kind, chromedp.Value(chromedp.CSS("#tree-filter-kind"))))
	// As in the list, a node's children that do not match are left out.
	if strings.Join(keys, ",") != ","+deploy || kind != "Deployment" {
		t.Errorf("kind=Deployment: graph %v, kind filter %q; want the app and the Deployment", keys, kind)
	}
	run("the list alike", chromedp.Click(chromedp.CSS(`[data-view="list"]`)), chromedp.WaitVisible(chromedp.CSS(`#tree li.node[data-key="`+deploy+`"]`)),
		into(&roots, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#tree > li.node")).filter((li) => !li.hidden).map((li) => li.dataset.key)`)),
		into(&search, chromedp.Evaluate[string](`location.search`)))
	if strings.Join(roots, ",") != deploy || search != "?kind=Deployment" {
		t.Errorf("list view: roots %v at %q, want the Deployment alone at ?kind=Deployment", roots, search)
	}
	run("a name in the graph view", chromedp.Click(chromedp.CSS(`[data-view="graph"]`)), setFilter("#tree-filter-kind", ""),
		chromedp.SendKeys(chromedp.CSS("#tree-filter-name"), "guestbook-con"),
		chromedp.Poll[chromedp.Void](graphKeys+`.length === 2`), into(&keys, chromedp.Evaluate[[]string](graphKeys)),
		into(&search, chromedp.Evaluate[string](`location.search`)))
	q, _ := url.ParseQuery(strings.TrimPrefix(search, "?"))
	if strings.Join(keys, ",") != ","+cm || q.Get("name") != "guestbook-con" || q.Get("view") != "graph" || q.Has("kind") {
		t.Errorf("name filter: graph %v at %q, want the ConfigMap alone at view=graph&name=guestbook-con", keys, search)
	}
	f.editConfigMapByHand()
	run("by sync status", setFilter("#tree-filter-name", ""), setFilter("#tree-filter-sync", "OutOfSync"),
		chromedp.WaitVisible(chromedp.CSS(`#graph g.gnode[data-key="`+cm+`"][data-sync="OutOfSync"]`)),
		chromedp.Poll[chromedp.Void](graphKeys+`.length === 2`), into(&keys, chromedp.Evaluate[[]string](graphKeys)),
		into(&search, chromedp.Evaluate[string](`location.search`)))
	if strings.Join(keys, ",") != ","+cm || !strings.Contains(search, "sync=OutOfSync") {
		t.Errorf("sync=OutOfSync: graph %v at %q, want the ConfigMap alone", keys, search)
	}
	viewShot(t, run, ".tree-section", "portal-graph-filters.png")
	var sync string
	var listHidden bool
	run("the URL afresh", chromedp.Navigate(f.http.URL+"/apps/guestbook"+search),
		chromedp.WaitVisible(chromedp.CSS(`#graph g.gnode[data-key="`+cm+`"]`)),
		into(&keys, chromedp.Evaluate[[]string](graphKeys)), into(&sync, chromedp.Value(chromedp.CSS("#tree-filter-sync"))),
		into(&listHidden, chromedp.Evaluate[bool](`document.getElementById("tree").hidden`)))
	if strings.Join(keys, ",") != ","+cm || sync != "OutOfSync" || !listHidden {
		t.Errorf("the filtered URL opens the graph %v (list hidden %v) with sync filter %q, want the ConfigMap alone", keys, listHidden, sync)
	}
}
