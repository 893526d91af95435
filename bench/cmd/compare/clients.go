package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

var (
	gvrNamespaces  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	gvrConfigMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	gvrDeployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// gvrOf maps the two kinds the harness writes to their resources.
func gvrOf(o *unstructured.Unstructured) (schema.GroupVersionResource, error) {
	switch o.GetKind() {
	case "ConfigMap":
		return gvrConfigMaps, nil
	case "Deployment":
		return gvrDeployments, nil
	}
	return schema.GroupVersionResource{}, fmt.Errorf("%s %s: kind not handled by the harness", o.GetKind(), o.GetName())
}

// writeCounter counts the requests sent through a client, and among them
// those that write (POST, PUT, PATCH, DELETE without dryRun=All).
type writeCounter struct {
	next     http.RoundTripper
	writes   atomic.Int64
	requests atomic.Int64

	mu    sync.Mutex
	first []string // the first writes, "METHOD path", for the log
	verbs map[string]*verbStat
}

// verbStat is the number of requests of one verb and the time they took
// (to the response's headers).
type verbStat struct {
	n     int64
	total time.Duration
}

// maxWritesNamed is how many writes a writeCounter remembers by name.
const maxWritesNamed = 10

// RoundTrip counts the request (and, if it writes, the write) and passes
// it on.
func (w *writeCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	w.requests.Add(1)
	start := time.Now()
	defer func() { w.observe(verbOf(r), time.Since(start)) }()
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		// A dry run, or an access review (a question the cache asks of
		// RBAC at start), stores nothing.
		if !strings.Contains(r.URL.RawQuery, "dryRun=All") && !strings.HasPrefix(r.URL.Path, "/apis/authorization.k8s.io/") {
			w.writes.Add(1)
			w.mu.Lock()
			if len(w.first) < maxWritesNamed {
				w.first = append(w.first, r.Method+" "+r.URL.Path)
			}
			w.mu.Unlock()
		}
	}
	return w.next.RoundTrip(r)
}

// verbOf names a request's verb as the API server's audit log would, with
// a dry-run set apart: "get", "list", "watch", "apply" (a server-side apply
// patch), "patch", "create", "update", "delete", each with " (dry-run)"
// when it stores nothing.
func verbOf(r *http.Request) string {
	q := r.URL.Query()
	var v string
	switch r.Method {
	case http.MethodGet:
		switch {
		case q.Get("watch") == "true" || q.Get("watch") == "1":
			v = "watch"
		default:
			v = getKind(r.URL.Path)
		}
	case http.MethodPatch:
		v = "patch"
		if r.Header.Get("Content-Type") == "application/apply-patch+yaml" {
			v = "apply"
		}
	case http.MethodPost:
		v = "create"
	case http.MethodPut:
		v = "update"
	case http.MethodDelete:
		v = "delete"
	default:
		v = strings.ToLower(r.Method)
	}
	if q.Get("dryRun") == "All" {
		v += " (dry-run)"
	}
	return v
}

// getKind tells a GET of one object ("get") from a list ("list") and from
// discovery ("discovery"), by the path's shape: /api/v1 or /apis/G/V, then
// [namespaces/NS/]RESOURCE[/NAME[/SUBRESOURCE]].
func getKind(path string) string {
	seg := strings.Split(strings.Trim(path, "/"), "/")
	var rest []string
	switch {
	case len(seg) >= 2 && seg[0] == "api":
		rest = seg[2:]
	case len(seg) >= 3 && seg[0] == "apis":
		rest = seg[3:]
	default:
		return "discovery"
	}
	if len(rest) >= 3 && rest[0] == "namespaces" {
		rest = rest[2:]
	}
	switch len(rest) {
	case 0:
		return "discovery"
	case 1:
		return "list"
	}
	return "get"
}

func (w *writeCounter) observe(verb string, d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.verbs == nil {
		w.verbs = map[string]*verbStat{}
	}
	st := w.verbs[verb]
	if st == nil {
		st = &verbStat{}
		w.verbs[verb] = st
	}
	st.n++
	st.total += d
}

// verbSnapshot returns the requests per verb counted so far.
func (w *writeCounter) verbSnapshot() map[string]verbStat {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]verbStat, len(w.verbs))
	for k, v := range w.verbs {
		out[k] = *v
	}
	return out
}

// verbsSince describes the requests per verb sent since before (a
// verbSnapshot): "apply: 1000 (mean 4.1 ms), get: 2 (mean 1.0 ms)".
func (w *writeCounter) verbsSince(before map[string]verbStat) string {
	now := w.verbSnapshot()
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(now)) {
		n, total := now[k].n-before[k].n, now[k].total-before[k].total
		if n == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s: %d (mean %.1f ms)", k, n, total.Seconds()*1000/float64(n)))
	}
	if len(parts) == 0 {
		return "no requests"
	}
	return strings.Join(parts, ", ")
}

// named returns the first writes counted, "METHOD path".
func (w *writeCounter) named() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.first)
}

func (w *writeCounter) count() int64 {
	if w == nil {
		return 0
	}
	return w.writes.Load()
}

func (w *writeCounter) requestCount() int64 {
	if w == nil {
		return 0
	}
	return w.requests.Load()
}

// restConfig returns the cluster's admin config with no client-side rate
// limit (the work is compared, not token buckets) and, when counter is not
// nil, every request counted by it.
func (h *harness) restConfig(counter *writeCounter) *rest.Config {
	cfg := h.cluster.Config()
	cfg.QPS, cfg.Burst = -1, 0
	cfg.Timeout = 2 * time.Minute
	if counter != nil {
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { counter.next = rt; return counter })
	}
	return cfg
}

// dynamic returns a dynamic client of the cluster; see restConfig.
func (h *harness) dynamic(counter *writeCounter) (dynamic.Interface, error) {
	return dynamic.NewForConfig(h.restConfig(counter))
}

// createNamespace creates a namespace named prefix plus a unique suffix.
func (h *harness) createNamespace(ctx context.Context, dyn dynamic.Interface, prefix string) (string, error) {
	name := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%1_000_000_000)
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	if _, err := dyn.Resource(gvrNamespaces).Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("namespace %s: %w", name, err)
	}
	return name, nil
}

// deleteNamespaces deletes the namespaces the harness made, best effort:
// on an API-server-only cluster nothing finalizes them, which is harmless
// since the cluster goes away with the run.
func deleteNamespaces(dyn dynamic.Interface, names []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, n := range names {
		_ = dyn.Resource(gvrNamespaces).Delete(ctx, n, metav1.DeleteOptions{})
	}
}

// parallel runs fn(i) for i in [0, n) on workers goroutines and returns
// the first error.
func parallel(n, workers int, fn func(i int) error) error {
	if workers < 1 {
		workers = 1
	}
	var (
		wg    sync.WaitGroup
		next  atomic.Int64
		once  sync.Once
		first error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// applyFloor is the floor: every object applied by a plain server-side
// apply patch from client-go, workers at a time, no ordering, no dry-run,
// no waiting.
func applyFloor(ctx context.Context, dyn dynamic.Interface, objs []*unstructured.Unstructured, workers int) error {
	force := true
	return parallel(len(objs), workers, func(i int) error {
		o := objs[i]
		gvr, err := gvrOf(o)
		if err != nil {
			return err
		}
		body, err := json.Marshal(o.Object)
		if err != nil {
			return err
		}
		if _, err := dyn.Resource(gvr).Namespace(o.GetNamespace()).Patch(ctx, o.GetName(), types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: "floor", Force: &force}); err != nil {
			return fmt.Errorf("floor apply %s %s/%s: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
		return nil
	})
}

// applyFloorDryRun is the second floor, the same requests as the engine's
// first sync: a server-side dry-run of every object (as many at once as
// the syncer's DryRunParallelism), and only when every one passed, the
// same server-side applies as applyFloor. Its distance to applyFloor is
// what the API server must do to validate before writing; the engine's
// distance to it is what the engine adds.
func applyFloorDryRun(ctx context.Context, dyn dynamic.Interface, objs []*unstructured.Unstructured, dryRunWorkers, workers int) error {
	if err := dryRunFloor(ctx, dyn, objs, dryRunWorkers); err != nil {
		return err
	}
	return applyFloor(ctx, dyn, objs, workers)
}

// dryRunFloor sends a server-side apply dry-run of each object, workers at
// a time, and returns the first refusal.
func dryRunFloor(ctx context.Context, dyn dynamic.Interface, objs []*unstructured.Unstructured, workers int) error {
	force := true
	return parallel(len(objs), workers, func(i int) error {
		o := objs[i]
		gvr, err := gvrOf(o)
		if err != nil {
			return err
		}
		body, err := json.Marshal(o.Object)
		if err != nil {
			return err
		}
		if _, err := dyn.Resource(gvr).Namespace(o.GetNamespace()).Patch(ctx, o.GetName(), types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: "floor", Force: &force, DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"}); err != nil {
			return fmt.Errorf("floor dry-run %s %s/%s: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
		return nil
	})
}
