package engine

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/engine/internal/compare"
	"github.com/kubegitops/gitops/sync"
)

// A refresh where nothing changed diffs nothing: every comparison is
// answered from the memo (desired content, live uid and resourceVersion,
// the app's options). A changed live object is diffed again, once, and its
// drift keeps its diff text on the memoized refreshes after it.
func TestUnchangedRefreshDiffsNothing(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	var diffs atomic.Int32
	e := newEngine(t, func(o *Options) {
		o.NewDiffer = func(opts diff.Options) (Differ, error) {
			d, err := defaultNewDiffer(opts)
			return countingDiffer{d, &diffs}, err
		}
	})
	app := dirApp(ns, repoDir(t, map[string]string{
		"app/cm.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: v}\n",
		"app/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {password: hunter2}\n",
		"app/sa.yaml":     "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa}\n",
	}), ns)
	ctx := context.Background()
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v", err)
	}
	refreshUntil(t, e, app, "Synced", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced })
	before := diffs.Load()
	for i := range 3 {
		st, err := e.Refresh(ctx, app)
		if err != nil || st.Sync != appstatus.Synced || len(st.Resources) != 3 {
			t.Fatalf("refresh %d: %v %+v", i, err, st)
		}
	}
	if n := diffs.Load() - before; n != 0 {
		t.Fatalf("3 refreshes of an unchanged app diffed %d objects, want 0", n)
	}

	// Drift: only the changed object is diffed again.
	editConfigMap(t, ns, "c", "k", "changed by hand")
	refreshUntil(t, e, app, "drift seen", func(s appstatus.Status) bool { return s.Sync == appstatus.OutOfSync })
	before = diffs.Load()
	st, err := e.Refresh(ctx, app)
	if err != nil || st.Sync != appstatus.OutOfSync {
		t.Fatalf("refresh after drift: %v %+v", err, st)
	}
	if n := diffs.Load() - before; n != 0 {
		t.Fatalf("a refresh with the drift unchanged diffed %d objects, want 0", n)
	}
	var text string
	for _, r := range st.Resources {
		if r.Key.Name == "c" {
			text = r.Diff
		}
		if r.Key.Name == "s" && strings.Contains(r.Diff, "hunter2") {
			t.Fatal("a Secret value in a memoized diff")
		}
	}
	if !strings.Contains(text, "changed by hand") {
		t.Fatalf("memoized drift lost its diff text: %q", text)
	}

	// A changed comparison option (a new ignore rule) builds a new differ
	// and memo: the drift is ignored at once, not served from the old memo.
	app.Spec.IgnoreDifferences = []ResourceIgnoreDifferences{{Kind: "ConfigMap", JSONPointers: []string{"/data"}}}
	st, err = e.Refresh(ctx, app)
	if err != nil || st.Sync != appstatus.Synced {
		t.Fatalf("refresh with /data ignored: %v %+v", err, st)
	}
}

// A verdict reached with a deduced schema (a custom resource whose CRD
// the cluster has not published yet) is not memoized: the next refresh
// compares again, so the CRD's real schema is used once it appears. A
// modelled comparison of the same inputs is memoized.
func TestDeducedComparisonsAreNotMemoized(t *testing.T) {
	opts := diff.DefaultOptions()
	opts.Mode = diff.ModeStructuredMerge
	d, err := diff.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	m := compare.NewMemoDiffer(countingDiffer{d, &n})
	obj := func(apiVersion, kind string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{"name": "w1", "namespace": "ns", "uid": "u1", "resourceVersion": "7"},
			"data":     map[string]any{"k": "v"}}}
		return u
	}
	for _, c := range []struct {
		apiVersion, kind string
		deduced          bool
		want             int32
	}{{"example.test/v1", "Widget", true, 3}, {"v1", "ConfigMap", false, 1}} {
		n.Store(0)
		for range 3 {
			res, err := m.Diff(context.Background(), obj(c.apiVersion, c.kind), obj(c.apiVersion, c.kind))
			if err != nil || res.Modified || res.Deduced != c.deduced {
				t.Fatalf("%s: %v modified=%v deduced=%v", c.kind, err, res.Modified, res.Deduced)
			}
		}
		if got := n.Load(); got != c.want {
			t.Fatalf("%s: 3 comparisons of the same inputs diffed %d times, want %d", c.kind, got, c.want)
		}
	}
}
