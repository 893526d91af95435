package main

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	gosync "sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// gvrApplications is Argo CD's Application resource.
var gvrApplications = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}

// annotationOwner is the annotation a sharded operator writes with its
// member name on each app it owns (package shard's AnnotationOwner).
const annotationOwner = "shard.kubegitops.io/owner"

// appSeen is what the watch saw last of one Application, and since the
// last reset: its writes (new resourceVersions), the writes among them
// that changed nothing (writeChanges is empty), the changes of what a
// user reads of the app (visible), and owners in order.
type appSeen struct {
	owner, sync, health string
	// opStarted is status.operationState.startedAt: a new sync (a heal)
	// changes it.
	opStarted string
	writes    int
	// noops counts the writes that changed nothing but the
	// resourceVersion and managedFields.
	noops int
	// periodic counts the writes that changed only status.reconciledAt:
	// the refresh of an unchanged app once per reconciliation interval
	// (Argo CD writes it on every refresh).
	periodic int
	// changes counts the writes that changed the app's visible state:
	// owner, sync status and revision, health, operation phase.
	changes int
	owners  []string
	// last is the version seen last, to diff the next one against.
	last *unstructured.Unstructured
}

// visible is what a user reads of an app in `kubectl get applications`,
// the CLI or the UI at a glance: owner, sync status and revision, health,
// and the operation (its phase and start: a new self-heal is a change
// even when its phase is Succeeded as the last one's). A write that
// changes none of it is a write per change too many, unless it records
// something else (resources, the tree, history, conditions), which
// writeChanges names.
func visible(u *unstructured.Unstructured) string {
	sync, _, _ := unstructured.NestedString(u.Object, "status", "sync", "status")
	rev, _, _ := unstructured.NestedString(u.Object, "status", "sync", "revision")
	health, _, _ := unstructured.NestedString(u.Object, "status", "health", "status")
	phase, _, _ := unstructured.NestedString(u.Object, "status", "operationState", "phase")
	started, _, _ := unstructured.NestedString(u.Object, "status", "operationState", "startedAt")
	_, op := u.Object["operation"]
	return strings.Join([]string{u.GetAnnotations()[annotationOwner], sync, rev, health, phase, started, fmt.Sprint(op)}, "|")
}

// writeChanges names what changed from prev to next: each annotation,
// label and finalizer list by key, spec, operation, and each top-level
// field of status (status.sync, status.health, status.operationState...),
// with status.sync and status.health split into their status and the
// rest. The resourceVersion, managedFields and generation are left out:
// a write that changed only those changed nothing (an empty result).
func writeChanges(prev, next *unstructured.Unstructured) []string {
	var out []string
	diffKeys := func(prefix string, a, b map[string]any) {
		keys := map[string]bool{}
		for k := range a {
			keys[k] = true
		}
		for k := range b {
			keys[k] = true
		}
		for k := range keys {
			if !reflect.DeepEqual(a[k], b[k]) {
				out = append(out, prefix+k)
			}
		}
	}
	pm, _, _ := unstructured.NestedMap(prev.Object, "metadata")
	nm, _, _ := unstructured.NestedMap(next.Object, "metadata")
	for _, k := range []string{"annotations", "labels"} {
		a, _ := pm[k].(map[string]any)
		b, _ := nm[k].(map[string]any)
		diffKeys("metadata."+k+"/", a, b)
	}
	for _, k := range []string{"finalizers", "deletionTimestamp"} {
		if !reflect.DeepEqual(pm[k], nm[k]) {
			out = append(out, "metadata."+k)
		}
	}
	for _, k := range []string{"spec", "operation"} {
		if !reflect.DeepEqual(prev.Object[k], next.Object[k]) {
			out = append(out, k)
		}
	}
	ps, _ := prev.Object["status"].(map[string]any)
	ns, _ := next.Object["status"].(map[string]any)
	for _, k := range []string{"sync", "health"} {
		a, _ := ps[k].(map[string]any)
		b, _ := ns[k].(map[string]any)
		if a["status"] != b["status"] {
			out = append(out, "status."+k+".status")
		}
		if !reflect.DeepEqual(withoutKey(a, "status"), withoutKey(b, "status")) {
			out = append(out, "status."+k+"(other)")
		}
		ps, ns = withoutKey(ps, k), withoutKey(ns, k)
	}
	diffKeys("status.", ps, ns)
	sort.Strings(out)
	return out
}

// withoutKey is a shallow copy of m without k.
func withoutKey(m map[string]any, k string) map[string]any {
	out := make(map[string]any, len(m))
	for key, v := range m {
		if key != k {
			out[key] = v
		}
	}
	return out
}

// appWatch follows the Applications of one namespace through a watch:
// each app's last owner, sync and health, and per app the writes and
// owner changes since the last reset, so that a phase counts exactly the
// writes it caused.
type appWatch struct {
	mu   gosync.Mutex
	apps map[string]*appSeen
	// kinds counts, since the last reset, the writes by what they
	// changed (writeChanges joined by "+", "nothing" for none).
	kinds map[string]int
	err   error
}

// watchApps lists the Applications of ns and follows them until ctx ends;
// a closed watch resumes at the last resourceVersion seen.
func watchApps(ctx context.Context, dyn dynamic.Interface, ns string) (*appWatch, error) {
	res := dyn.Resource(gvrApplications).Namespace(ns)
	list, err := res.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	w := &appWatch{apps: map[string]*appSeen{}, kinds: map[string]int{}}
	for i := range list.Items {
		w.observe(&list.Items[i])
	}
	rv := list.GetResourceVersion()
	go func() {
		for ctx.Err() == nil {
			wi, err := res.Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
			if err != nil {
				if ctx.Err() == nil {
					w.fail(err)
				}
				return
			}
			for ev := range wi.ResultChan() {
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					continue // a watch error: resume from rv
				}
				rv = u.GetResourceVersion()
				if ev.Type == watch.Added || ev.Type == watch.Modified {
					w.observe(u)
				}
			}
			wi.Stop()
		}
	}()
	return w, nil
}

func (w *appWatch) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.err = err
}

// observe records one version of an app.
func (w *appWatch) observe(u *unstructured.Unstructured) {
	owner := u.GetAnnotations()[annotationOwner]
	sync, _, _ := unstructured.NestedString(u.Object, "status", "sync", "status")
	health, _, _ := unstructured.NestedString(u.Object, "status", "health", "status")
	w.mu.Lock()
	defer w.mu.Unlock()
	a := w.apps[u.GetName()]
	if a == nil {
		a = &appSeen{}
		w.apps[u.GetName()] = a
	} else if u.GetResourceVersion() != a.last.GetResourceVersion() {
		a.writes++
		what := writeChanges(a.last, u)
		kind := strings.Join(what, "+")
		if len(what) == 0 {
			a.noops++
			kind = "nothing"
		}
		if kind == "status.reconciledAt" {
			a.periodic++
		}
		if visible(a.last) != visible(u) {
			a.changes++
		}
		w.kinds[kind]++
	}
	a.last = u.DeepCopy()
	a.owner, a.sync, a.health = owner, sync, health
	a.opStarted, _, _ = unstructured.NestedString(u.Object, "status", "operationState", "startedAt")
	if len(a.owners) == 0 || a.owners[len(a.owners)-1] != owner {
		a.owners = append(a.owners, owner)
	}
}

// reset starts a phase: writes and owners count from now (each app's
// owner list starts with its current owner).
func (w *appWatch) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, a := range w.apps {
		a.writes, a.noops, a.periodic, a.changes = 0, 0, 0, 0
		a.owners = []string{a.owner}
	}
	w.kinds = map[string]int{}
}

// writeKinds describes the writes since the last reset by what they
// changed, the most frequent first: "12 status.sync.status+status.resources, 3 nothing".
func (w *appWatch) writeKinds() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	type kc struct {
		kind string
		n    int
	}
	var all []kc
	for k, n := range w.kinds {
		all = append(all, kc{k, n})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].n != all[j].n {
			return all[i].n > all[j].n
		}
		return all[i].kind < all[j].kind
	})
	parts := make([]string, len(all))
	for i, c := range all {
		parts[i] = fmt.Sprintf("%d %s", c.n, c.kind)
	}
	if len(parts) == 0 {
		return "no writes"
	}
	return strings.Join(parts, "; ")
}

// snapshot copies what was seen, and the watch's error if it ended.
func (w *appWatch) snapshot() (map[string]appSeen, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]appSeen, len(w.apps))
	for k, a := range w.apps {
		c := *a
		c.last = nil
		c.owners = append([]string(nil), a.owners...)
		out[k] = c
	}
	return out, w.err
}
