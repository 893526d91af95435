package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestOperatorsTinySize runs the operators section on the full local
// cluster with 6 apps and 2 operator replicas (the binary built before the
// test's deadline): every app Synced, Healthy and owned by a live replica
// after the cold start, a kill, an added replica and a stop; the replicas'
// counts never added up to more than the apps; the kill and the stop moved
// apps, each with at most a few writes and no app changing owner twice;
// the heals of moved and kept apps were both timed, with at most 3 writes
// per healed app; and no phase wrote an Application without changing it.
func TestOperatorsTinySize(t *testing.T) {
	programsBuilt(t, true)
	bin, err := buildOperator(context.Background(), t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cfg := DefaultConfig()
	cfg.Only, cfg.Cluster = "operators", "full"
	cfg.OperatorApps, cfg.OperatorReplicas, cfg.OperatorHealSample, cfg.OperatorBin = 6, 2, 2, bin
	cfg.FleetTimeout = 3 * time.Minute
	cfg.Log = testWriter{t}
	rows, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 24 {
		t.Fatalf("%d rows, want 24", len(rows))
	}
	for _, r := range rows {
		m := r.Measure
		switch {
		case strings.Contains(m, "double management"), strings.Contains(m, "more than once"), strings.Contains(m, "changed nothing"):
			if r.Ours != 0 {
				t.Errorf("%s: %v, want 0", m, r.Ours)
			}
		case strings.Contains(m, "apps that changed owner") && !strings.Contains(m, "writes"):
			if r.Ours < 1 || r.Ours > float64(cfg.OperatorApps) {
				t.Errorf("%s: %v, want between 1 and %d", m, r.Ours, cfg.OperatorApps)
			}
		case strings.Contains(m, "per healed app"):
			// A heal may write the app's status once, twice (OutOfSync,
			// then Synced) or not at all (healed before a status write).
			if r.Ours < 0 || r.Ours > 3 {
				t.Errorf("%s: %v, want between 0 and 3", m, r.Ours)
			}
		case strings.Contains(m, "first heal"):
			if !(r.Ours > 0) || !(r.Theirs > 0) {
				t.Errorf("%s: %v against %v, want both positive", m, r.Ours, r.Theirs)
			}
		default:
			if !(r.Ours > 0) {
				t.Errorf("%s: %v, want positive", m, r.Ours)
			}
		}
	}
}
