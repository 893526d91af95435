package main

import "testing"

// TestWindowEffect holds windowEffect to Argo CD's rules for each kind of
// window, open or closed, with and without manualSync.
func TestWindowEffect(t *testing.T) {
	for _, tc := range []struct {
		w            windowRow
		anyAllowOpen bool
		want         string
	}{
		{windowRow{Kind: "deny", Active: true}, false, "blocks every sync"},
		{windowRow{Kind: "deny", Active: true, ManualSync: true}, false, "blocks automated syncs; manual syncs allowed"},
		{windowRow{Kind: "deny"}, true, "nothing now; blocks syncs while open"},
		{windowRow{Kind: "allow", Active: true}, true, "allows syncs"},
		{windowRow{Kind: "allow"}, true, "closed; another allow window is open"},
		{windowRow{Kind: "allow", ManualSync: true}, false, "closed: automated syncs wait for it; manual syncs allowed"},
		{windowRow{Kind: "allow"}, false, "closed: syncs wait for it to open"},
		{windowRow{Kind: "allow", Error: "bad schedule"}, false, "unreadable: every sync is refused"},
	} {
		if got := windowEffect(tc.w, tc.anyAllowOpen); got != tc.want {
			t.Errorf("windowEffect(%+v, %v) = %q, want %q", tc.w, tc.anyAllowOpen, got, tc.want)
		}
	}
}
