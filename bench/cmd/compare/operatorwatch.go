package main

import (
	"context"
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
// last reset: its writes (new resourceVersions) and owners in order.
type appSeen struct {
	owner, sync, health string
	writes              int
	owners              []string
}

// appWatch follows the Applications of one namespace through a watch:
// each app's last owner, sync and health, and per app the writes and
// owner changes since the last reset, so that a phase counts exactly the
// writes it caused.
type appWatch struct {
	mu   gosync.Mutex
	apps map[string]*appSeen
	err  error
}

// watchApps lists the Applications of ns and follows them until ctx ends;
// a closed watch resumes at the last resourceVersion seen.
func watchApps(ctx context.Context, dyn dynamic.Interface, ns string) (*appWatch, error) {
	res := dyn.Resource(gvrApplications).Namespace(ns)
	list, err := res.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	w := &appWatch{apps: map[string]*appSeen{}}
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
	} else {
		a.writes++
	}
	a.owner, a.sync, a.health = owner, sync, health
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
		a.writes = 0
		a.owners = []string{a.owner}
	}
}

// snapshot copies what was seen, and the watch's error if it ended.
func (w *appWatch) snapshot() (map[string]appSeen, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]appSeen, len(w.apps))
	for k, a := range w.apps {
		c := *a
		c.owners = append([]string(nil), a.owners...)
		out[k] = c
	}
	return out, w.err
}
