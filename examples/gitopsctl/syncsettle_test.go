package main

import (
	"strings"
	"testing"
)

// TestSyncThenStatusSaysSynced is the step after a sync as a user lives it:
// sync waits for the operation only (not for health), and the status it
// prints after must already say Synced, though the engine's cache learns
// of the objects just created a moment after the writes; the next sync
// then writes nothing.
func TestSyncThenStatusSaysSynced(t *testing.T) {
	ns := cluster.TestNamespace(t)
	appFile, _ := namedAppFixture(t, ns, "settle")
	kc := []string{"--app", appFile, "--kubeconfig", cluster.Kubeconfig()}
	code, out, errOut := runCLI(t, append([]string{"sync"}, kc...)...)
	if code != 0 {
		t.Fatalf("sync: exit %d\n%s\n%s", code, out, errOut)
	}
	_, after, _ := strings.Cut(out, "Result: Succeeded")
	mustContain(t, "the status printed after the sync", after, "Sync:      Synced")
	code, out, errOut = runCLI(t, append([]string{"sync"}, kc...)...)
	if code != 0 {
		t.Fatalf("second sync: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, changed := range []string{"created", "configured"} {
		if strings.Contains(out, changed) {
			t.Errorf("the second sync %s something:\n%s", changed, out)
		}
	}
}
