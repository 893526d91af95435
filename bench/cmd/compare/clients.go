package main

import (
	"context"
	"encoding/json"
	"fmt"
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
}

// maxWritesNamed is how many writes a writeCounter remembers by name.
const maxWritesNamed = 10

// RoundTrip counts the request (and, if it writes, the write) and passes
// it on.
func (w *writeCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	w.requests.Add(1)
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
