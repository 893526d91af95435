package notify

import (
	"fmt"
	"testing"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// statusChanges are n Argo-shaped apps as appstatus.Object builds them,
// cycling through the states the catalog's triggers look at, each with 20
// resources.
func statusChanges(b *testing.B, n int) ([]map[string]any, []*gitops.Application, []appstatus.ApplicationStatus) {
	b.Helper()
	healths := []health.Code{health.Healthy, health.Progressing, health.Degraded, health.Missing}
	syncs := []appstatus.SyncStatusCode{appstatus.Synced, appstatus.OutOfSync, appstatus.Unknown}
	phases := []sync.OperationPhase{"", sync.Running, sync.Succeeded, sync.Failed, sync.Error}
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var maps []map[string]any
	var apps []*gitops.Application
	var sts []appstatus.ApplicationStatus
	for i := 0; i < n; i++ {
		app := &gitops.Application{Spec: gitops.ApplicationSpec{Project: "default",
			Source:      &gitops.ApplicationSource{RepoURL: "https://git.example/team/apps.git", Path: fmt.Sprintf("apps/%d", i%100)},
			Destination: gitops.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"}}}
		app.Name, app.Namespace = fmt.Sprintf("app-%d", i%500), "argocd"
		st := appstatus.Status{Sync: syncs[i%len(syncs)], Health: health.Status{Code: healths[i%len(healths)]}, Revision: fmt.Sprintf("%040d", i)}
		for r := 0; r < 20; r++ {
			h := health.Status{Code: health.Healthy}
			st.Resources = append(st.Resources, appstatus.ResourceRow{Key: resource.Key{Group: "apps", Kind: "Deployment", Namespace: "web", Name: fmt.Sprintf("d%d", r)}, Status: appstatus.Synced, Health: &h})
		}
		as := appstatus.Refreshed(appstatus.ApplicationStatus{}, st, 1, t0)
		if p := phases[i%len(phases)]; p != "" {
			fin := metav1.NewTime(t0)
			as.OperationState = &appstatus.OperationState{Phase: string(p), StartedAt: fin, FinishedAt: &fin,
				SyncResult: appstatus.SyncResult(sync.Result{State: sync.State{Revision: st.Revision}}, 1)}
		}
		if i%50 == 0 {
			now := metav1.NewTime(t0)
			app.DeletionTimestamp = &now
		}
		m, err := appstatus.Object(app, as)
		if err != nil {
			b.Fatal(err)
		}
		maps, apps, sts = append(maps, m), append(apps, app), append(sts, as)
	}
	return maps, apps, sts
}

// BenchmarkCatalogTriggers evaluates the 8 catalog triggers for one app
// status change (ns/op and allocs/op are per change), over 10,000
// changes. The baseline in the same run is building the Argo-shaped app
// for that change (appstatus.Object), which every evaluation needs.
func BenchmarkCatalogTriggers(b *testing.B) {
	cfg, err := Load(Catalog(), nil, DefaultLoadOptions())
	if err != nil {
		b.Fatal(err)
	}
	var triggers []*Trigger
	for _, name := range CatalogTriggers {
		t, _ := cfg.Trigger(name)
		triggers = append(triggers, t)
	}
	maps, apps, sts := statusChanges(b, 10000)
	b.Run("evaluate-8", func(b *testing.B) {
		b.ReportAllocs()
		matched := 0
		for i := 0; i < b.N; i++ {
			env := NewEnv(maps[i%len(maps)])
			for _, t := range triggers {
				for _, r := range t.Evaluate(env) {
					if r.Matched {
						matched++
					}
				}
			}
		}
		if matched == 0 {
			b.Fatal("no trigger matched")
		}
	})
	b.Run("baseline-app-object", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := appstatus.Object(apps[i%len(apps)], sts[i%len(sts)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
