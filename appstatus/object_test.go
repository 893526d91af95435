package appstatus

import (
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/sync"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestObjectHasArgoShape(t *testing.T) {
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Project: "team",
		Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example/repo.git", Path: "app"},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"}}}
	app.Name, app.Namespace = "web", "argocd"
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := Refreshed(ApplicationStatus{}, Status{Sync: Synced, Health: health.Status{Code: health.Healthy}, Revision: "abc"}, 1, t0)
	fin := metav1.NewTime(t0)
	st.OperationState = &OperationState{Phase: string(sync.Succeeded), FinishedAt: &fin, SyncResult: SyncResult(sync.Result{State: sync.State{Revision: "abc"}}, 1)}
	obj, err := Object(app, st)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path ...string) any {
		var cur any = obj
		for _, p := range path {
			m, _ := cur.(map[string]any)
			cur = m[p]
		}
		return cur
	}
	for want, path := range map[string][]string{
		"Application": {"kind"}, "web": {"metadata", "name"}, "team": {"spec", "project"},
		"Synced": {"status", "sync", "status"}, "abc": {"status", "sync", "revision"}, "Healthy": {"status", "health", "status"},
		"Succeeded": {"status", "operationState", "phase"}, "2026-01-02T03:04:05Z": {"status", "operationState", "finishedAt"},
		"https://git.example/repo.git": {"spec", "source", "repoURL"},
	} {
		if got := get(path...); got != want {
			t.Errorf("%v = %v, want %q", path, got, want)
		}
	}
	if get("status", "operationState", "syncResult", "revision") != "abc" {
		t.Errorf("syncResult.revision missing: %v", get("status", "operationState"))
	}
}
