package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// auditRecords parses the fixture's audit log.
func (f *fixture) auditRecords() []auditRecord {
	f.t.Helper()
	var out []auditRecord
	for _, line := range strings.Split(strings.TrimSpace(f.audit.String()), "\n") {
		if line == "" {
			continue
		}
		var r auditRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			f.t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// waitAudit waits until n records of action end with outcome.
func (f *fixture) waitAudit(action, outcome string, n int) {
	f.t.Helper()
	waitFor(f.t, 90*time.Second, fmt.Sprintf("%d audit records %s %s", n, action, outcome), func() (bool, string) {
		got := 0
		for _, r := range f.auditRecords() {
			if r.Action == action && r.Outcome == outcome {
				got++
			}
		}
		return got >= n, f.audit.String()
	})
}

// lastAudit returns the newest record of action.
func (f *fixture) lastAudit(action string) auditRecord {
	f.t.Helper()
	recs := f.auditRecords()
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Action == action {
			return recs[i]
		}
	}
	f.t.Fatalf("no audit record of %s: %s", action, f.audit.String())
	return auditRecord{}
}

// ranAudits returns the records of requests that were not refused.
func (f *fixture) ranAudits() []auditRecord {
	f.t.Helper()
	var out []auditRecord
	for _, r := range f.auditRecords() {
		if !strings.HasPrefix(r.Outcome, "refused: ") {
			out = append(out, r)
		}
	}
	return out
}
