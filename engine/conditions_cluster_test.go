package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
)

// runCondition returns the app's condition of type ct in Run's status.
func runCondition(e *Engine, app string, ct appstatus.ConditionType) (appstatus.Condition, appstatus.Status, bool) {
	st, ok := e.Apps().AppStatus(v1alpha1.AppKey{Name: app})
	if !ok {
		return appstatus.Condition{}, st, false
	}
	for _, c := range st.Conditions {
		if c.Type == ct {
			return c, st, true
		}
	}
	return appstatus.Condition{}, st, false
}

// TestRunStatusCarriesFailures: failures were silent in the status Run
// keeps. An automated sync refused because the desired state is empty was
// only in the last operation (no condition), and a render error left the
// app saying Synced with a stale reconcile time. Now the first is a
// SyncError condition and the second a ComparisonError with the sync
// status Unknown, as in Argo CD; both go once the source is fixed.
func TestRunStatusCarriesFailures(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n"
	dir := repoDir(t, map[string]string{"app/a.yaml": cm})
	e := newEngine(t, func(o *Options) { o.Interval = time.Second })
	app := automated(dirApp(ns, dir, ns))
	startRun(t, e, app)
	eventually(t, time.Minute, "Synced", func() bool {
		st, ok := e.Apps().AppStatus(v1alpha1.KeyOf(app))
		return ok && st.Sync == appstatus.Synced
	})

	// Nothing left in the manifests: the automated sync refuses to prune
	// everything.
	if err := os.WriteFile(filepath.Join(dir, "app/a.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	e.Apps().Hint(dir)
	eventually(t, time.Minute, "a SyncError condition", func() bool {
		c, _, ok := runCondition(e, app.Name, appstatus.ConditionSyncError)
		return ok && strings.Contains(c.Message, "desired state is empty")
	})

	// The folder gone: the render fails.
	if err := os.RemoveAll(filepath.Join(dir, "app")); err != nil {
		t.Fatal(err)
	}
	removed := time.Now()
	e.Apps().Hint(dir)
	eventually(t, time.Minute, "Unknown with a ComparisonError", func() bool {
		_, st, ok := runCondition(e, app.Name, appstatus.ConditionComparisonError)
		return ok && st.Sync == appstatus.Unknown && st.ReconciledAt.After(removed)
	})

	// Fixed: Synced again, and no condition left.
	if err := os.MkdirAll(filepath.Join(dir, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "app/a.yaml"), []byte(cm), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Apps().Hint(dir)
	eventually(t, time.Minute, "Synced without conditions", func() bool {
		st, ok := e.Apps().AppStatus(v1alpha1.KeyOf(app))
		return ok && st.Sync == appstatus.Synced && len(st.Conditions) == 0
	})
}
