package sync

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kubegitops/gitops/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// getCounter counts the GETs of single ConfigMaps a client sends.
type getCounter struct {
	gets atomic.Int64
	next http.RoundTripper
}

func (c *getCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/configmaps/") {
		c.gets.Add(1)
	}
	return c.next.RoundTrip(r)
}

// absentSyncer is a syncer told by Absent that no object exists (as a
// cache that holds none of them would say), with a count of its writes
// and of its GETs of single ConfigMaps.
func absentSyncer(t *testing.T) (*Syncer, *writeCounter, *getCounter) {
	t.Helper()
	gc := &getCounter{}
	s, wc := newSyncer(t, func(o *syncerSetup) {
		o.Absent = func(resource.Key) bool { return true }
	})
	// newSyncer's client counts writes; wrap its transport once more.
	cfg := cluster.Config()
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		wc.next = rt
		gc.next = wc
		return gc
	})
	var err error
	if s, err = New(cfg, s.opts, s.with); err != nil {
		t.Fatal(err)
	}
	return s, wc, gc
}

// A first sync whose objects a cache says are absent reads none of them
// before the dry-run; an object that exists after all (the cache lagged)
// is told by its dry-run's answer, read then, and configured, not created.
func TestFirstSyncReadsNoObjectAbsentSays(t *testing.T) {
	ns := cluster.TestNamespace(t)
	ctx := context.Background()
	existing := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "old", "namespace": ns}, "data": map[string]any{"k": "before"}}}
	if _, err := dyn(t).Resource(gvrConfigMaps).Namespace(ns).Create(ctx, existing, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s, _, gc := absentSyncer(t)
	objs := decode(t, ns, `
apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: NS}
data: {k: v}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b, namespace: NS}
data: {k: v}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: old, namespace: NS}
data: {k: after}
`)
	res, err := s.Sync(ctx, Request{App: "absent", Desired: objs, Namespace: ns})
	mustSucceed(t, res, err)
	if got := gc.gets.Load(); got != 1 {
		t.Errorf("the first sync read %d ConfigMaps, want 1 (the one whose dry-run showed it exists)", got)
	}
	for name, want := range map[string]Action{"a": Created, "b": Created, "old": Configured} {
		if got := row(t, res, "ConfigMap "+ns+"/"+name).Action; got != want {
			t.Errorf("ConfigMap %s: action %s, want %s", name, got, want)
		}
	}
	if cm, ok := get(t, gvrConfigMaps, ns, "old"); !ok || cm.Object["data"].(map[string]any)["k"] != "after" {
		t.Errorf("ConfigMap old not configured: %v", cm)
	}
}

// Skipping the reads gives up no safety: one object of the app that the
// server refuses fails the whole sync with nothing written.
func TestAbsentSaysNothingWrittenWhenOneObjectFails(t *testing.T) {
	ns := cluster.TestNamespace(t)
	s, wc, _ := absentSyncer(t)
	objs := decode(t, ns, `
apiVersion: v1
kind: ConfigMap
metadata: {name: good-1, namespace: NS}
data: {k: v}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: good-2, namespace: NS}
data: {k: v}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: bad, namespace: NS}
data: {k: v}
notAField: 1
`)
	res, err := s.Sync(context.Background(), Request{App: "absent-bad", Desired: objs, Namespace: ns})
	if err == nil || res.Phase != Failed {
		t.Fatalf("sync with a bad object: phase %s, err %v, want Failed", res.Phase, err)
	}
	if n := wc.count(); n != 0 {
		t.Errorf("%d writes sent, want 0", n)
	}
	for _, name := range []string{"good-1", "good-2", "bad"} {
		if _, ok := get(t, gvrConfigMaps, ns, name); ok {
			t.Errorf("ConfigMap %s was written by a sync that failed its dry-run", name)
		}
	}
}
