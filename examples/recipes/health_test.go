package recipes

import (
	"testing"

	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/resource"
)

// The checker judges the Go-checked kind, the Lua-checked kind, and falls
// through to the built-in checks for everything else.
func TestHealthChecker(t *testing.T) {
	checker, err := NewHealthChecker()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, obj string
		want      health.Code
		message   string
	}{
		{"database ready", `{apiVersion: example.com/v1, kind: Database, metadata: {name: db, generation: 2}, status: {observedGeneration: 2, phase: Ready}}`, health.Healthy, ""},
		{"database not observed", `{apiVersion: example.com/v1, kind: Database, metadata: {name: db, generation: 3}, status: {observedGeneration: 2, phase: Ready}}`, health.Progressing, "waiting for the controller to observe the spec"},
		{"database failed", `{apiVersion: example.com/v1, kind: Database, metadata: {name: db}, status: {phase: Failed, message: disk full}}`, health.Degraded, "disk full"},
		{"database odd phase", `{apiVersion: example.com/v1, kind: Database, metadata: {name: db}, status: {phase: Sleeping}}`, health.Unknown, `unknown phase "Sleeping"`},
		{"database being deleted", `{apiVersion: example.com/v1, kind: Database, metadata: {name: db, deletionTimestamp: "2026-01-01T00:00:00Z"}, status: {phase: Ready}}`, health.Progressing, "Pending deletion"},
		{"queue ready (Lua)", `{apiVersion: example.com/v1, kind: Queue, metadata: {name: q}, status: {ready: true, depth: 7}}`, health.Healthy, "7 messages queued"},
		{"queue broken (Lua)", `{apiVersion: example.com/v1, kind: Queue, metadata: {name: q}, status: {error: no broker}}`, health.Degraded, "no broker"},
		{"queue new (Lua)", `{apiVersion: example.com/v1, kind: Queue, metadata: {name: q}}`, health.Progressing, "waiting for the queue"},
		{"built-in: Deployment", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, generation: 1}, spec: {replicas: 1}, status: {observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1}}`, health.Healthy, ""},
		{"built-in: other group's Database (generic)", `{apiVersion: other.io/v1, kind: Database, metadata: {name: db}, status: {conditions: [{type: Ready, status: "False", message: booting}]}}`, health.Progressing, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs, err := resource.Decode(c.name, []byte("---\n"+c.obj), resource.DefaultDecodeOptions()) // integers stay int64, as from a cluster
			if err != nil {
				t.Fatal(err)
			}
			st, err := checker.Check(objs[0])
			if err != nil || st == nil {
				t.Fatalf("Check: %v, %v", st, err)
			}
			if st.Code != c.want || (c.message != "" && st.Message != c.message) {
				t.Errorf("got %s, want %s %q", st, c.want, c.message)
			}
		})
	}
}
