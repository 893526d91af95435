package main

import (
	"context"
	"math"
	"os"
	"runtime"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/kubegitops/gitops/internal/reftools"
	"github.com/kubegitops/gitops/testenv"
)

// TestMain lets the Helm section re-execute the test binary as the
// harness's fresh render process.
func TestMain(m *testing.M) {
	if dir := os.Getenv(helmOnceEnv); dir != "" {
		os.Exit(helmOnce(dir))
	}
	os.Exit(m.Run())
}

// programsBuilt finds (or, outside make, builds) the programs the
// harness runs before a test sets its deadline: the local cluster's (the
// full cluster's when full), kubectl and helm. make tools builds them all
// before the tests, and a build takes the machine's time, never a test's.
func programsBuilt(t *testing.T, full bool) {
	t.Helper()
	opts := testenv.DefaultBuildOptions()
	opts.Log = t.Logf
	if _, err := testenv.EnsureBinaries(context.Background(), full, opts); err != nil {
		t.Fatalf("%v (run `make tools` before the tests)", err)
	}
	if !full {
		if _, err := testenv.EnsureKubectl(context.Background(), opts); err != nil {
			t.Fatalf("%v (run `make tools` before the tests)", err)
		}
		reftools.ForTest(t, reftools.Helm)
	}
}

// TestRunTinySizes runs every section of the harness with tiny sizes
// against a local API server and checks that each produced its figures,
// that the figures are positive, and that a resync of objects in sync
// sent no write while the floor rewrote every object.
func TestRunTinySizes(t *testing.T) {
	programsBuilt(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := DefaultConfig()
	cfg.Repeat = 1
	cfg.DiffObjects, cfg.DiffDryRunSample = 20, 5
	cfg.CacheObjects = 20
	cfg.SyncObjects = 20
	cfg.HelmTemplates, cfg.HelmRuns = 6, 2
	cfg.GitCommits, cfg.GitFiles = 20, 10
	cfg.Log = testWriter{t}
	rows, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	bySection := map[string][]Row{}
	for _, r := range rows {
		bySection[r.Section] = append(bySection[r.Section], r)
	}
	want := map[string]int{"diff": 10, "cache": 4, "sync": 22, "helm": 3, "git": 2}
	for s, n := range want {
		if len(bySection[s]) != n {
			t.Errorf("section %s: %d rows, want %d", s, len(bySection[s]), n)
		}
	}
	for _, r := range rows {
		if r.Unit == Writes {
			if r.Ours != 0 {
				t.Errorf("%s / %s: our resync sent %.0f writes, want 0", r.Measure, r.TheirName, r.Ours)
			}
			if (r.TheirName == "floor" || r.TheirName == sameRequestsLabel) && r.Theirs != float64(cfg.SyncObjects) {
				t.Errorf("%s's resync sent %.0f writes, want %d", r.TheirName, r.Theirs, cfg.SyncObjects)
			}
			continue
		}
		if r.Unit == Times {
			// A bound derived from the floors' figures: no alternative.
			if !(r.Ours > 0) || math.IsInf(r.Ours, 0) {
				t.Errorf("%s / %s: bound %v, want positive", r.Section, r.Measure, r.Ours)
			}
			continue
		}
		if r.Unit == Requests && r.Section == "sync" {
			// The floor applies each object once; the second floor
			// dry-runs and applies each, as Sync does.
			want := map[string]float64{"floor": float64(cfg.SyncObjects), sameRequestsLabel: 2 * float64(cfg.SyncObjects)}
			if w, ok := want[r.TheirName]; ok && r.Theirs != w {
				t.Errorf("%s's first sync sent %.0f requests, want %.0f", r.TheirName, r.Theirs, w)
			}
		}
		ours := r.Ours > 0 || (r.Unit == AllocsPerObj && r.Ours == 0) // a memo hit may allocate nothing
		if !ours || !(r.Theirs > 0) || math.IsInf(r.Ours, 0) {
			t.Errorf("%s / %s / %s: figures %v and %v, want both positive", r.Section, r.Measure, r.TheirName, r.Ours, r.Theirs)
		}
	}
	var table strings.Builder
	PrintTable(&table, rows)
	if got := strings.Count(table.String(), "\n"); got != len(rows)+2 {
		t.Errorf("table has %d lines, want %d", got, len(rows)+2)
	}
}

// TestFleetTinySize runs the fleet section on the full local cluster with
// 20 apps (100 objects): every app reaches Synced and Healthy through
// Engine.Run, the steady state writes nothing (and answers refreshes from
// the refresh memo), a commit touching one app
// renders exactly that app, a commit touching all gets them all Synced,
// an engine restarted over the same Redis render store gets every app
// Synced again with no render and no write, and the cluster floor (a bare
// client applying the same apps, then one dry-running each app before
// applying it) is measured beside the cold start, with the CPU each cost
// the cluster and the client and the bound derived from it. It runs both
// orders: the floors after the fleet on the same cluster (with the third,
// watched floor), and the floors first, each on a fresh, empty cluster.
func TestFleetTinySize(t *testing.T) {
	programsBuilt(t, true)
	for _, first := range []bool{false, true} {
		t.Run(map[bool]string{false: "floors after", true: "floors first"}[first], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cfg := DefaultConfig()
			cfg.Only, cfg.Cluster = "fleet", "full"
			cfg.FleetApps, cfg.FleetInterval, cfg.FleetSteady, cfg.FleetTimeout = 20, 5*time.Second, 6*time.Second, 3*time.Minute
			cfg.FleetFloorFirst = first
			cfg.FleetWatchedFloor = !first // the third floor, in one order only
			cfg.FleetCacheDir = t.TempDir()
			log := &logRecorder{t: t}
			cfg.Log = log
			rows, err := Run(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			checkFleetRows(t, rows, cfg.FleetWatchedFloor)
			where := "same cluster, same run"
			if first {
				where = "empty cluster before the fleet, same run"
				// Each floor and the fleet had a cluster of its own.
				if got := strings.Count(log.String(), "fresh, empty cluster for the same-requests floor"); got != 1 {
					t.Errorf("the same-requests floor had a fresh cluster %d times, want 1", got)
				}
			}
			for _, r := range rows {
				if r.TheirName != "" && !strings.HasSuffix(r.TheirName, where) {
					t.Errorf("%s: compared with %q, want a floor measured on the %s", r.Measure, r.TheirName, where)
				}
			}
		})
	}
}

// checkFleetRows checks the fleet section's rows of a tiny run.
func checkFleetRows(t *testing.T, rows []Row, watched bool) {
	t.Helper()
	want, bounds := 24, 1 // with the live heap per app
	if watched {
		want, bounds = 29, 2 // its time, rate, two CPU rows and its bound
	}
	if len(rows) != want {
		t.Fatalf("%d rows, want %d", len(rows), want)
	}
	bound := 0
	for _, r := range rows {
		switch {
		case strings.Contains(r.Measure, "writes"), strings.Contains(r.Measure, "restart") && strings.Contains(r.Measure, "renders"):
			if r.Ours != 0 {
				t.Errorf("%s: %.0f, want 0", r.Measure, r.Ours)
			}
		case strings.Contains(r.Measure, "renders"):
			if r.Ours != 1 {
				t.Errorf("%s: %.0f renders, want exactly 1 (the touched app)", r.Measure, r.Ours)
			}
		case strings.Contains(r.Measure, "Git requests"):
			// A resolve cache may answer a short window without a request.
		case r.Unit == CPUMillis:
			if !(r.Ours > 0) || !(r.Theirs > 0) {
				t.Errorf("%s: %v against %v, want both positive", r.Measure, r.Ours, r.Theirs)
			}
		case r.Unit == Times:
			bound++
			if !(r.Ours > 0) || math.IsInf(r.Ours, 0) {
				t.Errorf("%s: bound %v, want positive and finite", r.Measure, r.Ours)
			}
		default:
			if !(r.Ours > 0) {
				t.Errorf("%s: %v, want positive", r.Measure, r.Ours)
			}
		}
	}
	if bound != bounds {
		t.Errorf("%d bound rows, want %d", bound, bounds)
	}
	var table strings.Builder
	PrintTable(&table, rows)
	t.Log("\n" + table.String())
}

// logRecorder logs the harness's lines to the test and keeps them.
type logRecorder struct {
	t  *testing.T
	mu gosync.Mutex
	sb strings.Builder
}

func (l *logRecorder) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.sb.Write(p)
	l.mu.Unlock()
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// String returns every line logged so far.
func (l *logRecorder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sb.String()
}

func TestMedianAndVerdict(t *testing.T) {
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median of 3,1,2 = %v", m)
	}
	if m := median([]float64{4, 1, 2, 3}); m != 2.5 {
		t.Errorf("median of 4,1,2,3 = %v", m)
	}
	for _, c := range []struct {
		row  Row
		want string
	}{
		{Row{Ours: 1, Theirs: 2, Unit: Seconds}, "2.00x faster"},
		{Row{Ours: 3, Theirs: 1, Unit: Seconds}, "3.00x slower"},
		{Row{Ours: 400, Theirs: 100, Unit: PerSecond}, "4.00x faster"},
		{Row{Ours: 10, Theirs: 100, Unit: AllocsPerObj}, "10.00x fewer"},
		{Row{Ours: 1, Theirs: 0, Unit: Seconds}, ""},
	} {
		if got := c.row.Verdict(); got != c.want {
			t.Errorf("%+v: verdict %q, want %q", c.row, got, c.want)
		}
	}
}

func TestSectionsFlag(t *testing.T) {
	s, err := sections("sync, diff")
	if err != nil || !s["sync"] || !s["diff"] || s["git"] {
		t.Errorf("sections(sync, diff) = %v, %v", s, err)
	}
	if s, _ := sections(""); s["fleet"] || !s["git"] {
		t.Errorf("the default sections are all but fleet: %v", s)
	}
	if _, err := sections("sync,nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("an unknown section: error %v, want one naming it", err)
	}
}

// testWriter sends the harness's progress to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestFleetBounds checks the two bounds' arithmetic on figures whose
// answer is known: cores over the least CPU per app, over the floor's rate.
func TestFleetBounds(t *testing.T) {
	cores := float64(runtime.NumCPU())
	f := fleetFloors{
		floor: 100 * time.Second, dry: 100 * time.Second, watched: 125 * time.Second,
		floorCPU:   cpuUse{cluster: 180, self: 10, ok: true},
		dryCPU:     cpuUse{cluster: 170, self: 12, ok: true},
		watchedCPU: cpuUse{cluster: 200, self: 40, ok: true},
	}
	// The cold start cost the cluster more than the same-requests floor:
	// the floor's 0.17 s per app is the least; the client's side is the
	// no-dry-run floor's 0.01 s.
	b, ok := dryRunFleetBound(1000, 1000, cpuUse{cluster: 190, self: 30, ok: true}, f)
	if !ok {
		t.Fatal("no bound from complete figures")
	}
	if want := cores / 0.18 / 10; math.Abs(b.ratio-want) > 1e-9 {
		t.Errorf("dry-run-first bound %v, want %v", b.ratio, want)
	}
	if want := 190 / (cores * 100); math.Abs(b.utilisation-want) > 1e-9 {
		t.Errorf("utilisation %v, want %v", b.utilisation, want)
	}
	w, ok := watchedBound(1000, f)
	if !ok {
		t.Fatal("no watched bound from complete figures")
	}
	if want := cores / 0.24 / 10; math.Abs(w.ratio-want) > 1e-9 {
		t.Errorf("watched bound %v, want %v", w.ratio, want)
	}
	if _, ok := dryRunFleetBound(1000, 1000, cpuUse{}, f); ok {
		t.Error("a bound without the cold start's CPU readings")
	}
}
