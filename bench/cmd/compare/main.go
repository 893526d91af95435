package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubegitops/gitops/testenv"
)

// Config holds the harness's sizes and choices; the flags fill it.
type Config struct {
	// Only names the sections to run; empty runs them all.
	Only string
	// Repeat is how many times each measurement runs; the median is kept.
	Repeat int
	// Cluster is "apiserver" (etcd and kube-apiserver only) or "full".
	Cluster string
	// DiffObjects is the number of Deployments diffed.
	DiffObjects int
	// DiffDryRunSample is how many of them the modes that send a dry-run
	// per object (ours uncached, Flux's Diff) diff per repetition.
	DiffDryRunSample int
	// CacheObjects is the number of ConfigMaps the cache section lists.
	CacheObjects int
	// SyncObjects is the number of objects synced (half ConfigMaps, half
	// Deployments).
	SyncObjects int
	// Workers is the parallelism of the floor's applies and of Flux's
	// dry-runs (ResourceManager.SetConcurrency), ours' ApplyParallelism.
	Workers int
	// HelmTemplates is the number of templates of the chart rendered.
	HelmTemplates int
	// HelmRuns is how many renders each Helm figure is the median of.
	HelmRuns int
	// GitCommits and GitFiles size the repository fetched.
	GitCommits, GitFiles int
	// FleetApps is the number of Applications of the fleet section.
	FleetApps int
	// FleetInterval is the engine's refresh interval in the fleet section
	// (Argo CD's default, 3 minutes).
	FleetInterval time.Duration
	// FleetSteady is how long the fleet's steady state is measured.
	FleetSteady time.Duration
	// FleetTimeout bounds each wait of the fleet section.
	FleetTimeout time.Duration
	// FleetCacheDir is the Git cache of the fleet's engine (empty: the
	// source's default, under the user cache).
	FleetCacheDir string
	// ClusterQPS, when above zero, is the client rate limit of the full
	// cluster's controller manager and scheduler
	// (testenv.Options.ControllerQPS).
	ClusterQPS int
	// FleetFloorApps is how many apps the fleet section's cluster floor
	// applies with a bare client (fleetFloor); 0 means FleetApps, at most
	// 1,000; negative skips the floor.
	FleetFloorApps int
	// FleetFloorFirst measures the floors before the engine, each on an
	// empty cluster of its own, and then gives the engine a fresh cluster
	// (issue 37's rule for 10,000 apps). Otherwise they run after it, with
	// its apps still in the cluster.
	FleetFloorFirst bool
	// FleetWatchedFloor measures a third floor: the same-requests floor
	// while a cluster cache (package cache, as the engine builds one)
	// watches the whole cluster in this process, so that the report tells
	// what watching costs the cluster and the client from what the engine
	// adds beyond it.
	FleetWatchedFloor bool
	// FleetSyncWorkers, when above zero, is the fleet engine's
	// Options.SyncWorkers (0: the engine's default).
	FleetSyncWorkers int
	// FleetQPS is the fleet engine's Options.QPS. Default -1: no
	// client-side limit, as every client of the harness (its floors too);
	// 0 measures at the engine's default limit (200).
	FleetQPS float64
	// FleetProfile, when set, is a folder that receives pprof profiles of
	// each fleet phase (cold, steady, commit), and the heap dump after the
	// steady state's GC (steady.heapdump, read by cmd/heapspans).
	FleetProfile string
	// FleetSteadyOnly ends the fleet section after its steady state (cold
	// start, steady CPU and heap): a memory comparison at 10,000 apps
	// without the commits, the restart and the floors.
	FleetSteadyOnly bool
	// OperatorApps is the number of Applications of the operators section.
	OperatorApps int
	// OperatorReplicas is how many operator replicas the operators section
	// starts (2 or more).
	OperatorReplicas int
	// OperatorHealSample is how many apps that moved, and as many that
	// kept their owner, the operators section drifts to time their heal.
	OperatorHealSample int
	// OperatorBin is a built examples/operator; empty builds one before
	// the section measures anything.
	OperatorBin string
	// Log receives progress lines.
	Log io.Writer
}

// DefaultConfig returns the sizes of the issue: 1,000 objects per sync,
// 1,000 Deployments diffed, 10,000 ConfigMaps cached, a 50-template chart,
// a 10,000-commit repository of 1,000 files, each measured 3 times.
func DefaultConfig() Config {
	return Config{
		Repeat: 3, Cluster: "apiserver",
		DiffObjects: 1000, DiffDryRunSample: 200,
		CacheObjects: 10000,
		SyncObjects:  1000, Workers: 8,
		HelmTemplates: 50, HelmRuns: 10,
		GitCommits: 10000, GitFiles: 1000,
		FleetApps: 1000, FleetQPS: -1, FleetInterval: 3 * time.Minute, FleetSteady: 3 * time.Minute, FleetTimeout: 30 * time.Minute,
		OperatorApps: 300, OperatorReplicas: 3, OperatorHealSample: 20,
		Log: os.Stderr,
	}
}

func main() {
	if dir := os.Getenv(helmOnceEnv); dir != "" {
		os.Exit(helmOnce(dir))
	}
	cfg := DefaultConfig()
	flag.StringVar(&cfg.Only, "only", "", "comma-separated sections to run: diff,cache,sync,helm,git,fleet,operators (default all but fleet and operators)")
	flag.IntVar(&cfg.Repeat, "repeat", cfg.Repeat, "runs of each measurement; the median is reported")
	flag.StringVar(&cfg.Cluster, "cluster", cfg.Cluster, "local cluster: apiserver (etcd and kube-apiserver) or full (controllers, scheduler, kwok)")
	flag.IntVar(&cfg.DiffObjects, "diff-objects", cfg.DiffObjects, "Deployments diffed")
	flag.IntVar(&cfg.DiffDryRunSample, "diff-dryrun-sample", cfg.DiffDryRunSample, "objects diffed per run by the modes that send one dry-run per object")
	flag.IntVar(&cfg.CacheObjects, "cache-objects", cfg.CacheObjects, "ConfigMaps listed and cached")
	flag.IntVar(&cfg.SyncObjects, "sync-objects", cfg.SyncObjects, "objects synced (half ConfigMaps, half Deployments)")
	flag.IntVar(&cfg.Workers, "workers", cfg.Workers, "parallel writers of the floor, ours and Flux's dry-runs")
	flag.IntVar(&cfg.HelmTemplates, "helm-templates", cfg.HelmTemplates, "templates in the chart rendered")
	flag.IntVar(&cfg.HelmRuns, "helm-runs", cfg.HelmRuns, "renders per Helm figure")
	flag.IntVar(&cfg.GitCommits, "git-commits", cfg.GitCommits, "commits in the repository fetched")
	flag.IntVar(&cfg.GitFiles, "git-files", cfg.GitFiles, "files in the repository fetched")
	flag.IntVar(&cfg.FleetApps, "fleet-apps", cfg.FleetApps, "Applications of the fleet section (5 objects each)")
	flag.DurationVar(&cfg.FleetInterval, "fleet-interval", cfg.FleetInterval, "refresh interval of the fleet's engine")
	flag.DurationVar(&cfg.FleetSteady, "fleet-steady", cfg.FleetSteady, "how long the fleet's steady state is measured")
	flag.DurationVar(&cfg.FleetTimeout, "fleet-timeout", cfg.FleetTimeout, "bound of each wait of the fleet section")
	flag.IntVar(&cfg.ClusterQPS, "cluster-qps", cfg.ClusterQPS, "client rate limit of the full cluster's controller manager and scheduler (0: their defaults)")
	flag.IntVar(&cfg.FleetFloorApps, "fleet-floor-apps", cfg.FleetFloorApps, "apps the cluster floor applies with a bare client (0: -fleet-apps, at most 1000; negative: no floor)")
	flag.BoolVar(&cfg.FleetWatchedFloor, "fleet-watched-floor", cfg.FleetWatchedFloor, "measure a third floor: the same-requests floor while a cluster cache watches the cluster")
	flag.BoolVar(&cfg.FleetFloorFirst, "fleet-floor-first", cfg.FleetFloorFirst, "measure the fleet's floors first, each on a fresh, empty cluster, then start a fresh cluster for the engine")
	flag.IntVar(&cfg.FleetSyncWorkers, "fleet-sync-workers", cfg.FleetSyncWorkers, "the fleet engine's SyncWorkers (0: the engine's default)")
	flag.Float64Var(&cfg.FleetQPS, "fleet-qps", cfg.FleetQPS, "the fleet engine's QPS (-1: no client-side limit, as the floors; 0: the engine's default)")
	flag.StringVar(&cfg.FleetProfile, "fleet-profile", "", "folder for pprof profiles (CPU, heap, goroutines, block, mutex) of each fleet phase, and the heap dump after the steady state (steady.heapdump: go run ./cmd/heapspans FILE)")
	flag.BoolVar(&cfg.FleetSteadyOnly, "fleet-steady-only", false, "end the fleet section after the steady state (cold start, steady CPU, heap): no commits, restart or floors")
	flag.IntVar(&cfg.OperatorApps, "operators-apps", cfg.OperatorApps, "Applications of the operators section (5 objects each)")
	flag.IntVar(&cfg.OperatorReplicas, "operators-replicas", cfg.OperatorReplicas, "operator replicas the operators section starts")
	flag.IntVar(&cfg.OperatorHealSample, "operators-heal-sample", cfg.OperatorHealSample, "apps that moved, and as many that did not, whose heal the operators section times")
	flag.StringVar(&cfg.OperatorBin, "operators-bin", "", "a built examples/operator (default: built before the operators section measures)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	rows, err := Run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
	fmt.Printf("\n%d cores, %s, load average %s, took %s\n\n", runtime.NumCPU(), runtime.Version(), loadAverage(), time.Since(start).Round(time.Second))
	PrintTable(os.Stdout, rows)
}

// Run starts a local cluster, runs the chosen sections in order and
// returns their rows. The cluster is stopped before Run returns.
func Run(ctx context.Context, cfg Config) ([]Row, error) {
	only, err := sections(cfg.Only)
	if err != nil {
		return nil, err
	}
	if cfg.Repeat < 1 {
		cfg.Repeat = 1
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	logf := func(format string, args ...any) { fmt.Fprintf(cfg.Log, format+"\n", args...) }
	// controller-runtime (under Flux's ssa) complains on stderr, with a
	// stack, when its process-wide logger was never set.
	ctrllog.SetLogger(logr.Discard())
	opts := testenv.DefaultOptions()
	switch cfg.Cluster {
	case "apiserver":
		opts.APIServerOnly = true
	case "full":
	default:
		return nil, fmt.Errorf("-cluster: want apiserver or full, not %q", cfg.Cluster)
	}
	opts.Build.Log = logf
	opts.ControllerQPS = cfg.ClusterQPS
	h := &harness{cfg: cfg, clusterOpts: opts, logf: logf}
	if only["diff"] || only["cache"] || only["sync"] || only["fleet"] || only["operators"] {
		logf("starting the local cluster (%s)", cfg.Cluster)
		if h.cluster, err = testenv.Start(ctx, opts); err != nil {
			return nil, err
		}
		// h.cluster, not the first one: freshCluster may replace it.
		defer func() { h.cluster.Stop() }()
	}
	var rows []Row
	for _, s := range []struct {
		name string
		run  func(context.Context) ([]Row, error)
	}{
		{"diff", h.diffSection},
		{"cache", h.cacheSection},
		{"sync", h.syncSection},
		{"helm", h.helmSection},
		{"git", h.gitSection},
		{"fleet", h.fleetSection},
		{"operators", h.operatorsSection},
	} {
		if !only[s.name] {
			continue
		}
		logf("== %s (load average %s)", s.name, loadAverage())
		start := time.Now()
		r, err := s.run(ctx)
		if err != nil {
			return rows, fmt.Errorf("%s: %w", s.name, err)
		}
		logf("== %s took %s", s.name, time.Since(start).Round(100*time.Millisecond))
		rows = append(rows, r...)
	}
	return rows, nil
}

// harness carries what every section needs.
type harness struct {
	cfg         Config
	cluster     *testenv.Cluster
	clusterOpts testenv.Options
	logf        func(format string, args ...any)
}

// freshCluster stops the local cluster and starts a new, empty one with the
// same options in its place.
func (h *harness) freshCluster(ctx context.Context) error {
	if err := h.cluster.Stop(); err != nil {
		return fmt.Errorf("stop the cluster: %w", err)
	}
	c, err := testenv.Start(ctx, h.clusterOpts)
	if err != nil {
		return fmt.Errorf("start a fresh cluster: %w", err)
	}
	h.cluster = c
	return nil
}

// loadAverage returns the first three fields of /proc/loadavg, or "?".
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil || len(data) == 0 {
		return "?"
	}
	var a, b, c string
	if _, err := fmt.Sscan(string(data), &a, &b, &c); err != nil {
		return "?"
	}
	return a + " " + b + " " + c
}
