package gitops

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/resource"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

func TestDecideAutoSync(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	heal := &SyncPolicy{Automated: &SyncPolicyAutomated{Prune: true, SelfHeal: true}}
	noHeal := &SyncPolicy{Automated: &SyncPolicyAutomated{Prune: true}}
	noPrune := &SyncPolicy{Automated: &SyncPolicyAutomated{SelfHeal: true}}
	off := false
	disabled := &SyncPolicy{Automated: &SyncPolicyAutomated{Enabled: &off}}
	cm := resource.Key{Kind: "ConfigMap", Namespace: "ns", Name: "a"}
	changed := Status{Sync: OutOfSync, Revision: "r2", Resources: []ResourceStatus{{Key: cm, Status: OutOfSync, Diff: "-a\n+b"}}}
	drifted := Status{Sync: OutOfSync, Revision: "r2", Resources: []ResourceStatus{{Key: cm, Status: OutOfSync, Diff: "-a\n+c"}}}
	pruneOnly := Status{Sync: OutOfSync, Revision: "r2", Resources: []ResourceStatus{{Key: cm, Status: OutOfSync, RequiresPruning: true}}}
	kept := Status{Sync: OutOfSync, Revision: "r2", Resources: []ResourceStatus{{Key: cm, Status: OutOfSync, RequiresPruning: true, PruneDisabled: true}}}
	synced := &AutoSyncRecord{Revision: "r2", At: now.Add(-time.Minute)}
	cases := []struct {
		name     string
		policy   *SyncPolicy
		status   Status
		last     *AutoSyncRecord
		sync     bool
		selfHeal bool
		wait     time.Duration
	}{
		{name: "no policy", status: changed},
		{name: "automated disabled", policy: disabled, status: changed},
		{name: "in sync", policy: heal, status: Status{Sync: Synced, Revision: "r2"}},
		{name: "comparison error", policy: heal, status: Status{Sync: OutOfSync, Revision: "r2", Conditions: []Condition{{Type: ConditionComparisonError}}}},
		{name: "first sync", policy: heal, status: changed, sync: true},
		{name: "new revision", policy: noHeal, status: changed, last: &AutoSyncRecord{Revision: "r1", At: now}, sync: true},
		{name: "prune only, prune off", policy: noPrune, status: pruneOnly},
		{name: "prune only, prune on", policy: heal, status: pruneOnly, sync: true},
		{name: "kept by Prune=false", policy: heal, status: kept},
		{name: "same revision failed", policy: heal, status: drifted, last: &AutoSyncRecord{Revision: "r2", Failed: true, At: now.Add(-time.Hour)}},
		{name: "same revision, no selfHeal", policy: noHeal, status: drifted, last: synced},
		// The same drift as the last sync was run to fix is healed again
		// once the backoff has passed (a person made the same edit twice,
		// or a sync could not fix it: then the backoff grows).
		{name: "same revision, the same drift again", policy: heal, status: changed, last: synced, sync: true, selfHeal: true},
		{name: "the same drift again, within the backoff", policy: heal, status: changed, last: &AutoSyncRecord{Revision: "r2", At: now.Add(-time.Minute), Heals: 4}, wait: 4 * time.Minute},
		{name: "self-heal of new drift", policy: heal, status: drifted, last: synced, sync: true, selfHeal: true},
		{name: "first backoff", policy: heal, status: drifted, last: &AutoSyncRecord{Revision: "r2", At: now.Add(-2 * time.Second)}, wait: 3 * time.Second},
		{name: "backoff grows", policy: heal, status: drifted, last: &AutoSyncRecord{Revision: "r2", At: now.Add(-10 * time.Second), Heals: 2}, wait: 35 * time.Second},
		{name: "backoff capped", policy: heal, status: drifted, last: &AutoSyncRecord{Revision: "r2", At: now.Add(-time.Minute), Heals: 9}, wait: 4 * time.Minute},
		{name: "count starts again after a quiet spell", policy: heal, status: drifted, last: &AutoSyncRecord{Revision: "r2", At: now.Add(-11 * time.Minute), Heals: 9}, sync: true, selfHeal: true},
	}
	for _, c := range cases {
		d := DecideAutoSync(AutoSyncInput{Policy: c.policy, Status: c.status, Last: c.last, Now: now})
		if d.Sync != c.sync || d.SelfHeal != c.selfHeal || d.Wait != c.wait {
			t.Errorf("%s: got sync=%v selfHeal=%v wait=%v (%s), want sync=%v selfHeal=%v wait=%v", c.name, d.Sync, d.SelfHeal, d.Wait, d.Reason, c.sync, c.selfHeal, c.wait)
		}
		if !d.Sync && d.Reason == "" && d.Wait == 0 {
			t.Errorf("%s: no sync and no reason", c.name)
		}
	}
	d := DecideAutoSync(AutoSyncInput{Policy: heal, Status: drifted, Last: &AutoSyncRecord{Revision: "r2", At: now.Add(-20 * time.Second), Heals: 1}, Now: now})
	if d.Next.Heals != 2 || d.Next.Revision != "r2" || !d.Next.At.Equal(now) {
		t.Errorf("next record %+v", d.Next)
	}
}

// TestRunDoesNotRepeatASyncThatChangesNothing: an object kept by
// Prune=false leaves the app OutOfSync after a successful sync; the run
// loop must not sync the same revision again and again (it did every 5 s).
func TestRunDoesNotRepeatASyncThatChangesNothing(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{
		"app/a.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n",
		"app/keep.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep\n  annotations: {argocd.argoproj.io/sync-options: Prune=false}\n",
	})
	notes := &noteLog{}
	e := newEngine(t, func(o *Options) { o.Interval = 2 * time.Second; o.Notify = notes.add })
	app := automated(dirApp(ns, dir, ns))
	startRun(t, e, app)
	eventually(t, time.Minute, "Synced", func() bool {
		st, ok := e.AppStatus(app.Name)
		return ok && st.Sync == Synced
	})
	if err := os.Remove(filepath.Join(dir, "app/keep.yaml")); err != nil {
		t.Fatal(err)
	}
	e.Hint(dir)
	eventually(t, time.Minute, "OutOfSync with the kept object", func() bool {
		st, ok := e.AppStatus(app.Name)
		if !ok || st.Sync != OutOfSync {
			return false
		}
		for _, r := range st.Resources {
			if r.Key.Name == "keep" && r.RequiresPruning && r.PruneDisabled {
				return true
			}
		}
		return false
	})
	before := notes.count(NotifySyncStarted, app.Name)
	deadline := time.Now().Add(time.Minute)
	eventually(t, 2*time.Minute, "a minute of refreshes", func() bool { return time.Now().After(deadline) })
	if n := notes.count(NotifySyncStarted, app.Name) - before; n > 0 {
		t.Fatalf("%d automated syncs in a minute of a revision whose sync changes nothing", n)
	}
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "keep", metav1.GetOptions{}); apierrors.IsNotFound(err) {
		t.Fatal("the Prune=false object was pruned")
	}
	// Real drift is still healed.
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "drifted"
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "drift healed", func() bool {
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "a", metav1.GetOptions{})
		return err == nil && cm.Data["k"] == "v"
	})
}

func TestHealthReasonNamesTheConditionsOfAnUnknownApp(t *testing.T) {
	t.Parallel()
	st := Status{Health: health.Status{Code: health.Unknown}, Conditions: []Condition{{Type: ConditionComparisonError, Message: "repository unreachable"}}}
	if got := healthReason(st); got != "ComparisonError: repository unreachable" {
		t.Fatalf("reason %q", got)
	}
	st.Health = health.Status{Code: health.Degraded, Message: "Caused by apps/Deployment ns/web: crash"}
	if got := healthReason(st); got != st.Health.Message {
		t.Fatalf("reason %q, want the aggregated message", got)
	}
	st.Health = health.Status{Code: health.Healthy}
	if got := healthReason(st); got != "" {
		t.Fatalf("a healthy app's reason %q", got)
	}
}
