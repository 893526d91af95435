package main

import (
	"testing"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// TestNextAllowed checks when a blocked sync is next allowed: at the end
// of an open deny window, at the next opening of a closed allow window,
// at the later of both when a deny window covers the allow window's
// opening, and never (zero) when a deny window is always open.
func TestNextAllowed(t *testing.T) {
	now := time.Date(2026, 3, 2, 10, 10, 0, 0, time.UTC)
	app := &gitops.Application{}
	app.Name = "web"
	app.Spec.Destination.Namespace = "web"
	win := func(kind, sched, dur string) v1alpha1.SyncWindow {
		return v1alpha1.SyncWindow{Kind: kind, Schedule: sched, Duration: dur, Applications: []string{"*"}}
	}
	for name, tc := range map[string]struct {
		windows []v1alpha1.SyncWindow
		want    time.Time
	}{
		"deny open until 10:30":          {[]v1alpha1.SyncWindow{win("deny", "0 * * * *", "30m")}, time.Date(2026, 3, 2, 10, 30, 0, 0, time.UTC)},
		"allow opens at 12:00":           {[]v1alpha1.SyncWindow{win("allow", "0 12 * * *", "1h")}, time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)},
		"deny over the allow's opening":  {[]v1alpha1.SyncWindow{win("allow", "0 12 * * *", "1h"), win("deny", "0 11 * * *", "90m")}, time.Date(2026, 3, 2, 12, 30, 0, 0, time.UTC)},
		"deny always open: never":        {[]v1alpha1.SyncWindow{win("deny", "* * * * *", "1h")}, time.Time{}},
		"allow in another zone at 09:00": {[]v1alpha1.SyncWindow{{Kind: "allow", Schedule: "0 9 * * *", Duration: "1h", TimeZone: "America/New_York", Applications: []string{"*"}}}, time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)},
	} {
		p := &v1alpha1.AppProject{}
		p.Spec.SyncWindows = tc.windows
		if got := nextAllowed(p, app, now); !got.Equal(tc.want) {
			t.Errorf("%s: next allowed %s, want %s", name, got, tc.want)
		}
	}
}
