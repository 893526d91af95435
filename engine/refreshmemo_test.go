package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/sync"
)

// clockScript judges a ConfigMap Degraded from a fixed time on: a health
// that changes with the clock alone, never with the object.
const clockScript = `
hs = {}
if os.time() >= 2000000000 then
  hs.status = "Degraded"
  hs.message = "too late"
else
  hs.status = "Healthy"
end
return hs`

// TestRefreshMemo: a refresh where nothing changed renders and diffs
// nothing, yet says what a full one would; a script's health is judged
// again every time (it may read the clock); a change in the cluster, in Git or a hard refresh compares anew.
func TestRefreshMemo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{
		"app/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n",
		"app/b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata: {k: v}\n",
	})
	var now atomic.Int64
	now.Store(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC).Unix())
	hopts := health.DefaultOptions()
	hopts.Overrides = map[string]string{"ConfigMap": clockScript}
	hopts.Lua.Clock = func() time.Time { return time.Unix(now.Load(), 0) }
	checker, err := health.NewChecker(hopts)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	e := newEngine(t, func(o *Options) { o.Health, o.Registerer = checker, reg })
	app := dirApp(ns, dir, ns)
	count := func(how string) float64 { return testutil.ToFloat64(e.metrics.Refreshes.WithLabelValues(how)) }
	refresh := func() (appstatus.Status, string) {
		t.Helper()
		memo, rendered := count("memoized"), count("rendered")
		st, err := e.Refresh(ctx, app)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case count("memoized") == memo+1 && count("rendered") == rendered:
			return st, "memoized"
		case count("rendered") == rendered+1 && count("memoized") == memo:
			return st, "rendered"
		}
		t.Fatalf("one refresh counted memoized %v→%v, rendered %v→%v", memo, count("memoized"), rendered, count("rendered"))
		return st, ""
	}

	if _, how := refresh(); how != "rendered" {
		t.Fatalf("the first refresh was %s", how)
	}
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v %s", err, res.Summary())
	}
	full := refreshUntil(t, e, app, "Synced and Healthy", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced && s.Health.Code == health.Healthy })

	// Nothing changed: the same answer, memoized.
	var st appstatus.Status
	eventually(t, time.Minute, "a memoized refresh", func() bool {
		var how string
		st, how = refresh()
		return how == "memoized"
	})
	if st.Sync != appstatus.Synced || st.Health.Code != health.Healthy || st.Revision != full.Revision || len(st.Resources) != len(full.Resources) {
		t.Fatalf("memoized status %+v, full %+v", st, full)
	}
	for i, r := range st.Resources {
		if r.Key != full.Resources[i].Key || r.Status != appstatus.Synced || r.Health == nil || r.Health.Code != health.Healthy {
			t.Fatalf("memoized row %d: %+v, full %+v", i, r, full.Resources[i])
		}
	}
	// What a caller does with a status does not reach the memo.
	st.Resources[0].Health.Code, st.Resources[0].Status = health.Degraded, appstatus.OutOfSync
	if st, how := refresh(); how != "memoized" || st.Resources[0].Health.Code != health.Healthy || st.Resources[0].Status != appstatus.Synced {
		t.Fatalf("after the caller changed its copy: %s %+v", how, st.Resources[0])
	}

	// Health follows the clock even when nothing else changed.
	now.Store(2000000000)
	if st, how := refresh(); how != "memoized" || st.Health.Code != health.Degraded || st.Resources[0].Health.Code != health.Degraded {
		t.Fatalf("after the clock passed: %s, health %+v, row %+v", how, st.Health, st.Resources[0].Health)
	}
	now.Store(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC).Unix())

	// A change in the cluster is compared.
	editConfigMap(t, ns, "a", "k", "changed by hand")
	rendered := count("rendered")
	drift := refreshUntil(t, e, app, "drift seen", func(s appstatus.Status) bool { return s.Sync == appstatus.OutOfSync })
	if count("rendered") == rendered || !strings.Contains(drift.Resources[0].Diff, "changed by hand") {
		t.Fatalf("drift: rendered %v→%v, row %+v", rendered, count("rendered"), drift.Resources[0])
	}
	if st, how := refresh(); how != "memoized" || st.Sync != appstatus.OutOfSync || st.Resources[0].Diff != drift.Resources[0].Diff {
		t.Fatalf("the drift again: %s %+v", how, st.Resources[0])
	}

	// A hard refresh renders, whatever the memo holds.
	if st, err := e.HardRefresh(ctx, app); err != nil || st.Sync != appstatus.OutOfSync {
		t.Fatalf("hard refresh: %v %+v", err, st)
	}
	if count("rendered") < rendered+2 {
		t.Fatalf("the hard refresh was not rendered: %v", count("rendered"))
	}

	// A change in Git is rendered: b gets a new value.
	if err := os.WriteFile(filepath.Join(dir, "app/b.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata: {k: new}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, how := refresh()
	if how != "rendered" || st.Revision == full.Revision || st.Resources[1].Status != appstatus.OutOfSync || !strings.Contains(st.Resources[1].Diff, "new") {
		t.Fatalf("after a commit: %s, revision %s (was %s), row %+v", how, st.Revision, full.Revision, st.Resources[1])
	}
}

// TestRefreshMemoKeepsPureVerdictsOfItsChecker: a memoized refresh keeps
// the built-in checks' verdicts (they read the object alone, and the
// object is at the same version) and says what a full refresh says; a
// checker Reconfigure brings in judges at the next refresh and on the
// memoized ones after it, and so does the first one back.
func TestRefreshMemoKeepsPureVerdictsOfItsChecker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{
		"app/svc.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  ports: [{port: 80}]\n",
	})
	builtin, err := health.NewChecker(health.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	sopts := health.DefaultOptions()
	sopts.Overrides = map[string]string{"Service": `return {status = "Degraded", message = "judged by the script"}`}
	scripted, err := health.NewChecker(sopts)
	if err != nil {
		t.Fatal(err)
	}
	if !builtin.Pure(schema.GroupKind{Kind: "Service"}) || scripted.Pure(schema.GroupKind{Kind: "Service"}) {
		t.Fatal("a Service's verdict should be pure with the built-in check alone, not with a script")
	}
	reg := prometheus.NewRegistry()
	e := newEngine(t, func(o *Options) { o.Health, o.Registerer = builtin, reg })
	app := dirApp(ns, dir, ns)
	count := func(how string) float64 { return testutil.ToFloat64(e.metrics.Refreshes.WithLabelValues(how)) }
	// judged refreshes until one is memoized and checks its verdict.
	judged := func(what string, want health.Code, message string) {
		t.Helper()
		var st appstatus.Status
		eventually(t, time.Minute, what+": a memoized refresh", func() bool {
			before := count("memoized")
			var err error
			st, err = e.Refresh(ctx, app)
			if err != nil || len(st.Resources) != 1 || st.Resources[0].Health == nil || st.Resources[0].Health.Code != want {
				t.Fatalf("%s: %v, health %+v, rows %+v (want %s)", what, err, st.Health, st.Resources, want)
			}
			return count("memoized") == before+1
		})
		if st.Health.Code != want || st.Resources[0].Health.Message != message {
			t.Fatalf("%s, memoized: health %+v, row %+v", what, st.Health, st.Resources[0].Health)
		}
	}
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v %s", err, res.Summary())
	}
	refreshUntil(t, e, app, "Synced and Healthy", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced && s.Health.Code == health.Healthy })
	judged("the built-in check", health.Healthy, "")

	opts := e.Settings().Options()
	opts.Health = scripted
	if _, err := e.Settings().Reconfigure(ctx, opts); err != nil {
		t.Fatal(err)
	}
	judged("the script's checker", health.Degraded, "judged by the script")

	opts.Health = builtin
	if _, err := e.Settings().Reconfigure(ctx, opts); err != nil {
		t.Fatal(err)
	}
	judged("the built-in check back", health.Healthy, "")
}
