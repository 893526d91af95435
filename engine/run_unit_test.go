package engine

import (
	"errors"
	"testing"
	"time"

	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
)

func TestKeepLastGood(t *testing.T) {
	r := &runner{}
	st := &appState{}
	failed := appstatus.Status{Sync: appstatus.Unknown, Health: health.Status{Code: health.Unknown},
		Conditions: []appstatus.Condition{{Type: appstatus.ConditionComparisonError, Message: "git: repository unreachable"}}}
	// No good status yet: the failure is recorded as it is.
	if got := r.keepLastGood(st, failed, errors.New("down")); got.Sync != appstatus.Unknown {
		t.Fatalf("first failure: %+v", got)
	}
	good := appstatus.Status{Sync: appstatus.Synced, Health: health.Status{Code: health.Healthy}, Revision: "abc",
		Resources: []appstatus.ResourceRow{{Status: appstatus.Synced}}}
	if got := r.keepLastGood(st, good, nil); got.Revision != "abc" || !st.hasGood {
		t.Fatalf("good refresh: %+v", got)
	}
	// The repository fails: the last good resources and health stay, with
	// the error; the sync status is Unknown (nothing was compared: the
	// app said Synced, as if all were well) and the time is the failure's.
	failed.ReconciledAt = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	got := r.keepLastGood(st, failed, errors.New("down"))
	if got.Sync != appstatus.Unknown || got.Health.Code != health.Healthy || got.Revision != "abc" || len(got.Resources) != 1 || !got.ReconciledAt.Equal(failed.ReconciledAt) {
		t.Fatalf("kept status: %+v", got)
	}
	if len(got.Conditions) != 1 || got.Conditions[0].Message != "git: repository unreachable" {
		t.Fatalf("the failure is not reported: %+v", got.Conditions)
	}
	if len(st.good.Conditions) != 0 {
		t.Fatal("the kept status was changed in place")
	}
	// The cluster is gone: nothing is known of the live state.
	gone := &ClusterUnavailableError{Cluster: "east", Err: errors.New("connection refused")}
	if got := r.keepLastGood(st, failed, gone); got.Sync != appstatus.Unknown || got.Health.Code != health.Unknown {
		t.Fatalf("unavailable cluster: %+v", got)
	}
	// A refusal that compared every object is a real outcome, not a failure.
	refused := appstatus.Status{Sync: appstatus.Unknown, Resources: []appstatus.ResourceRow{{Status: appstatus.OutOfSync}}}
	if got := r.keepLastGood(st, refused, errors.New("policy")); got.Sync != appstatus.Unknown || st.good.Sync != appstatus.Unknown {
		t.Fatalf("refusal: %+v", got)
	}
}
