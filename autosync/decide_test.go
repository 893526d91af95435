package autosync

import (
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/resource"
)

func TestDecide(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	heal := &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true, SelfHeal: true}}
	noHeal := &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true}}
	noPrune := &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{SelfHeal: true}}
	off := false
	disabled := &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Enabled: &off}}
	cm := resource.Key{Kind: "ConfigMap", Namespace: "ns", Name: "a"}
	changed := appstatus.Status{Sync: appstatus.OutOfSync, Revision: "r2", Resources: []appstatus.ResourceRow{{Key: cm, Status: appstatus.OutOfSync, Diff: "-a\n+b"}}}
	drifted := appstatus.Status{Sync: appstatus.OutOfSync, Revision: "r2", Resources: []appstatus.ResourceRow{{Key: cm, Status: appstatus.OutOfSync, Diff: "-a\n+c"}}}
	pruneOnly := appstatus.Status{Sync: appstatus.OutOfSync, Revision: "r2", Resources: []appstatus.ResourceRow{{Key: cm, Status: appstatus.OutOfSync, RequiresPruning: true}}}
	kept := appstatus.Status{Sync: appstatus.OutOfSync, Revision: "r2", Resources: []appstatus.ResourceRow{{Key: cm, Status: appstatus.OutOfSync, RequiresPruning: true, PruneDisabled: true}}}
	synced := &Record{Revision: "r2", At: now.Add(-time.Minute)}
	srcA := []v1alpha1.ApplicationSource{{RepoURL: "https://git.example/repo", Path: "chart"}}
	srcB := []v1alpha1.ApplicationSource{{RepoURL: "https://git.example/repo", Path: "chart",
		Helm: &v1alpha1.ApplicationSourceHelm{Parameters: []v1alpha1.HelmParameter{{Name: "message", Value: "edited"}}}}}
	cases := []struct {
		name     string
		policy   *v1alpha1.SyncPolicy
		status   appstatus.Status
		last     *Record
		sources  []v1alpha1.ApplicationSource
		sync     bool
		selfHeal bool
		wait     time.Duration
	}{
		{name: "no policy", status: changed},
		{name: "automated disabled", policy: disabled, status: changed},
		{name: "in sync", policy: heal, status: appstatus.Status{Sync: appstatus.Synced, Revision: "r2"}},
		{name: "comparison error", policy: heal, status: appstatus.Status{Sync: appstatus.OutOfSync, Revision: "r2", Conditions: []appstatus.Condition{{Type: appstatus.ConditionComparisonError}}}},
		{name: "first sync", policy: heal, status: changed, sync: true},
		{name: "new revision", policy: noHeal, status: changed, last: &Record{Revision: "r1", At: now}, sync: true},
		{name: "prune only, prune off", policy: noPrune, status: pruneOnly},
		{name: "prune only, prune on", policy: heal, status: pruneOnly, sync: true},
		{name: "kept by Prune=false", policy: heal, status: kept},
		{name: "same revision failed", policy: heal, status: drifted, last: &Record{Revision: "r2", Failed: true, At: now.Add(-time.Hour)}},
		{name: "same revision, no selfHeal", policy: noHeal, status: drifted, last: synced},
		// Argo CD syncs again when spec.source differs from the last
		// sync's syncResult.source (a parameter edited in the UI).
		{name: "same revision, sources edited", policy: noHeal, status: drifted, last: &Record{Revision: "r2", Sources: srcA, At: now}, sources: srcB, sync: true},
		{name: "same revision failed, sources edited", policy: heal, status: drifted, last: &Record{Revision: "r2", Sources: srcA, Failed: true, At: now}, sources: srcB, sync: true},
		{name: "same revision, same sources, no selfHeal", policy: noHeal, status: drifted, last: &Record{Revision: "r2", Sources: srcA, At: now}, sources: srcA},
		{name: "same revision, sources not recorded", policy: noHeal, status: drifted, last: synced, sources: srcB},
		// The same drift as the last sync was run to fix is healed again
		// once the backoff has passed (a person made the same edit twice,
		// or a sync could not fix it: then the backoff grows).
		{name: "same revision, the same drift again", policy: heal, status: changed, last: synced, sync: true, selfHeal: true},
		{name: "the same drift again, within the backoff", policy: heal, status: changed, last: &Record{Revision: "r2", At: now.Add(-time.Minute), Heals: 4}, wait: 102 * time.Second},
		{name: "self-heal of new drift", policy: heal, status: drifted, last: synced, sync: true, selfHeal: true},
		// Without a backoff set, Argo CD's defaults: 2 s, times 3, at most
		// 300 s.
		{name: "first backoff", policy: heal, status: drifted, last: &Record{Revision: "r2", At: now.Add(-time.Second)}, wait: time.Second},
		{name: "first backoff passed", policy: heal, status: drifted, last: &Record{Revision: "r2", At: now.Add(-2 * time.Second)}, sync: true, selfHeal: true},
		{name: "backoff grows", policy: heal, status: drifted, last: &Record{Revision: "r2", At: now.Add(-10 * time.Second), Heals: 2}, wait: 8 * time.Second},
		{name: "backoff capped", policy: heal, status: drifted, last: &Record{Revision: "r2", At: now.Add(-time.Minute), Heals: 9}, wait: 4 * time.Minute},
		{name: "count starts again after a quiet spell", policy: heal, status: drifted, last: &Record{Revision: "r2", At: now.Add(-11 * time.Minute), Heals: 9}, sync: true, selfHeal: true},
	}
	for _, c := range cases {
		d := Decide(Input{Policy: c.policy, Status: c.status, Sources: c.sources, Last: c.last, Now: now})
		if d.Sync != c.sync || d.SelfHeal != c.selfHeal || d.Wait != c.wait {
			t.Errorf("%s: got sync=%v selfHeal=%v wait=%v (%s), want sync=%v selfHeal=%v wait=%v", c.name, d.Sync, d.SelfHeal, d.Wait, d.Reason, c.sync, c.selfHeal, c.wait)
		}
		if !d.Sync && d.Reason == "" && d.Wait == 0 {
			t.Errorf("%s: no sync and no reason", c.name)
		}
	}
	d := Decide(Input{Policy: heal, Status: drifted, Last: &Record{Revision: "r2", At: now.Add(-20 * time.Second), Heals: 1}, Now: now})
	if d.Next.Heals != 2 || d.Next.Revision != "r2" || !d.Next.At.Equal(now) || d.HealAttempt != 2 {
		t.Errorf("next record %+v, attempt %d", d.Next, d.HealAttempt)
	}
	// While it waits, the decision names the self-heal to come and when.
	d = Decide(Input{Policy: heal, Status: drifted, Last: &Record{Revision: "r2", At: now.Add(-10 * time.Second), Heals: 2}, Now: now})
	if want := "self-heal backoff: already synced r2 10s ago, self-heal attempt 3 in 8s"; d.Reason != want || d.HealAttempt != 3 {
		t.Errorf("waiting: reason %q attempt %d, want %q attempt 3", d.Reason, d.HealAttempt, want)
	}
}

// TestDecideArgoCDBackoff: Argo CD's controller.self.heal.backoff.*
// defaults (2 s, times 3, at most 300 s, the count starting again after
// 330 s), and controller.self.heal.timeout.seconds without a backoff (a
// fixed wait).
func TestDecideArgoCDBackoff(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	heal := &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{SelfHeal: true}}
	cm := resource.Key{Kind: "ConfigMap", Namespace: "ns", Name: "a"}
	drifted := appstatus.Status{Sync: appstatus.OutOfSync, Revision: "r2", Resources: []appstatus.ResourceRow{{Key: cm, Status: appstatus.OutOfSync}}}
	argo, fixed := DefaultBackoff(), FixedBackoff(30*time.Second)
	cases := []struct {
		name    string
		backoff Backoff
		last    Record
		sync    bool
		wait    time.Duration
	}{
		{name: "first wait is 2 s", backoff: argo, last: Record{Revision: "r2", At: now.Add(-time.Second)}, wait: time.Second},
		{name: "past 2 s", backoff: argo, last: Record{Revision: "r2", At: now.Add(-2 * time.Second)}, sync: true},
		{name: "third heal waits 18 s", backoff: argo, last: Record{Revision: "r2", At: now.Add(-10 * time.Second), Heals: 2}, wait: 8 * time.Second},
		{name: "capped at 300 s", backoff: argo, last: Record{Revision: "r2", At: now.Add(-100 * time.Second), Heals: 8}, wait: 200 * time.Second},
		{name: "cooldown of 330 s starts the count again", backoff: argo, last: Record{Revision: "r2", At: now.Add(-330 * time.Second), Heals: 8}, sync: true},
		{name: "fixed wait", backoff: fixed, last: Record{Revision: "r2", At: now.Add(-20 * time.Second), Heals: 5}, wait: 10 * time.Second},
		{name: "fixed wait passed", backoff: fixed, last: Record{Revision: "r2", At: now.Add(-30 * time.Second), Heals: 5}, sync: true},
	}
	for _, c := range cases {
		d := Decide(Input{Policy: heal, Status: drifted, Last: &c.last, Now: now, SelfHealTimeout: time.Hour, Backoff: &c.backoff})
		if d.Sync != c.sync || d.Wait != c.wait {
			t.Errorf("%s: sync=%v wait=%v (%s), want sync=%v wait=%v", c.name, d.Sync, d.Wait, d.Reason, c.sync, c.wait)
		}
	}
}
