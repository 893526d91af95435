package main

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing/fstest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/wait"

	gitops "github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/git"
)

// fleetNamespaces is how many namespaces the fleet's apps spread over.
const fleetNamespaces = 100

// fleetApp is one app of the monorepo: a ConfigMap, a Secret, a Service, a
// Deployment of one replica and a ServiceAccount. rev changes the
// ConfigMap only (a commit touching the app).
func fleetApp(i int, rev string) map[string]string {
	n := fmt.Sprintf("a%05d", i)
	return map[string]string{
		"cm.yaml":     fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {app: %q, rev: %q}\n", n, n, rev),
		"secret.yaml": fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: %s}\nstringData: {token: t-%s}\n", n, n),
		"svc.yaml":    fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: %s}\nspec:\n  selector: {app: %s}\n  ports: [{port: 80, targetPort: 8080}]\n", n, n),
		"sa.yaml":     fmt.Sprintf("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: %s}\n", n),
		"deploy.yaml": fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: %s}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: %s}}\n  template:\n    metadata: {labels: {app: %s}}\n    spec:\n      serviceAccountName: %s\n      containers: [{name: web, image: nginx:1.27, ports: [{containerPort: 8080}]}]\n", n, n, n, n),
	}
}

// fleetSection runs cfg.FleetApps Applications from one monorepo on the
// real Git server through Engine.Run with automated sync, on the full local
// cluster (kwok runs the Pods, so Deployments report their rollout), and
// reports: the cold start to every app Synced and Healthy; the steady
// state over cfg.FleetSteady (CPU seconds per minute of this process, API
// requests and Git requests per minute, heap in use, goroutines); a commit
// touching 1% of the apps (time to those Synced at the new revision, and
// the renders it cost); a commit touching all; a restart over the warm
// Redis render store; and, with the engine stopped, the cluster floor
// (fleetFloor), without and with a dry-run of each app first, that the
// cold start's rate is compared with; with cfg.FleetFloorFirst, the floors
// run first, each on a fresh, empty cluster, and the fleet on a third.
// With cfg.FleetWatchedFloor, a third floor sends the second's requests
// beside a cluster cache watching the cluster. Beside the rates it
// reports what the cold start and each floor cost the cluster's processes
// and this process in CPU, and the most any client that dry-runs every
// object first (and, with the third floor, that also watches the cluster)
// could reach here (fleetCPURows).
func (h *harness) fleetSection(ctx context.Context) ([]Row, error) {
	if h.cfg.Cluster != "full" {
		return nil, fmt.Errorf("the fleet section needs -cluster full (kwok reports the Deployments' rollout)")
	}
	n := h.cfg.FleetApps
	floorApps := h.cfg.FleetFloorApps
	if floorApps == 0 {
		floorApps = min(n, 1000)
	}
	var floors *fleetFloors
	if h.cfg.FleetFloorFirst && floorApps > 0 {
		h.logf("fleet: the floors first, on the empty cluster")
		f, err := h.measureFloors(ctx, floorApps, true, h.cfg.FleetWatchedFloor)
		if err != nil {
			return nil, err
		}
		floors = &f
		if err := h.freshCluster(ctx); err != nil {
			return nil, err
		}
	}
	gs, err := gitserver.Start(ctx, gitserver.DefaultOptions())
	if err != nil {
		return nil, err
	}
	defer gs.Close()
	files := fstest.MapFS{}
	for i := range n {
		for name, body := range fleetApp(i, "1") {
			files[fmt.Sprintf("apps/a%05d/%s", i, name)] = &fstest.MapFile{Data: []byte(body)}
		}
	}
	if _, err := gs.CreateRepository(ctx, "fleet", files); err != nil {
		return nil, err
	}
	dyn, err := h.dynamic(nil)
	if err != nil {
		return nil, err
	}
	nss := make([]string, min(fleetNamespaces, n))
	for i := range nss {
		if nss[i], err = h.createNamespace(ctx, dyn, fmt.Sprintf("fleet-%02d", i)); err != nil {
			return nil, err
		}
	}
	defer deleteNamespaces(dyn, nss)

	api := &writeCounter{}
	reg := prometheus.NewRegistry()
	opts := gitops.DefaultOptions()
	opts.Clusters = []gitops.ClusterConfig{{Name: "in-cluster", Server: "https://kubernetes.default.svc", Config: h.restConfig(api)}}
	opts.Interval = h.cfg.FleetInterval
	opts.Registerer = reg
	if h.cfg.FleetSyncWorkers > 0 {
		opts.SyncWorkers = h.cfg.FleetSyncWorkers
	}
	// The engine's Options.QPS, not the rest.Config's, limits its clients:
	// the harness's rule (no client-side limit) is set here.
	opts.QPS = float32(h.cfg.FleetQPS)
	gitSource, err := git.New(git.Options{CacheDir: h.cfg.FleetCacheDir, ResolveTTL: min(time.Minute, h.cfg.FleetInterval)})
	if err != nil {
		return nil, err
	}
	opts.SourceFor = func(string) (source.Source, error) { return gitSource, nil }
	rds, err := startRedis(ctx)
	if err != nil {
		return nil, err
	}
	defer rds.stop()
	opts.RenderStore = rds.tiered()
	e, err := gitops.New(opts)
	if err != nil {
		return nil, err
	}
	defer func() { e.Close() }()
	repo := gs.RepoURL("fleet")
	apps := make([]gitops.Application, n)
	for i := range apps {
		a := &apps[i]
		a.Name = fmt.Sprintf("fleet-%05d", i)
		a.Spec.Source = &gitops.ApplicationSource{RepoURL: repo, Path: fmt.Sprintf("apps/a%05d", i), TargetRevision: gs.Branch()}
		a.Spec.Destination = gitops.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: nss[i%len(nss)]}
		a.Spec.SyncPolicy = &gitops.SyncPolicy{Automated: &gitops.SyncPolicyAutomated{Prune: true, SelfHeal: true}}
	}

	h.logf("fleet: %d apps of 5 objects over %d namespaces, interval %s, %d sync workers, QPS %s", n, len(nss), opts.Interval, e.Settings().Options().SyncWorkers, qpsName(e.Settings().Options().QPS))
	prof, err := startPhase(h.cfg.FleetProfile, "cold")
	if err != nil {
		return nil, err
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	cpuBefore := h.readCPU()
	start := time.Now()
	go func() { done <- e.Run(runCtx, apps) }()
	defer func() { stop(); <-done }()
	ready := func(idx []int, rev string) func(context.Context) (bool, error) {
		return fleetReady(e, apps, idx, rev, done)
	}

	head, err := gs.Head(ctx, "fleet")
	if err != nil {
		return nil, err
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, h.cfg.FleetTimeout, true, ready(all, head)); err != nil {
		return nil, fmt.Errorf("cold start: not every app Synced and Healthy at %s within %s: %w", head, h.cfg.FleetTimeout, err)
	}
	cold := time.Since(start)
	coldCPU := h.readCPU().since(cpuBefore)
	if err := prof.stop(); err != nil {
		return nil, err
	}
	h.logf("fleet: cold start to %d apps Synced and Healthy: %s; requests: %s", n, cold.Round(time.Millisecond), api.verbsSince(nil))

	// Steady state: nothing changes for FleetSteady.
	if prof, err = startPhase(h.cfg.FleetProfile, "steady"); err != nil {
		return nil, err
	}
	cpu0, api0, writes0, git0 := processCPU(), api.requestCount(), api.count(), gs.Requests()
	memo0, full0, err := refreshCounts(reg)
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case err := <-done:
		return nil, fmt.Errorf("Engine.Run ended: %w", err)
	case <-time.After(h.cfg.FleetSteady):
	}
	minutes := time.Since(t0).Minutes()
	if err := prof.stop(); err != nil {
		return nil, err
	}
	cpuPerMin := (processCPU() - cpu0).Seconds() / minutes
	apiPerMin := float64(api.requestCount()-api0) / minutes
	steadyWrites := api.count() - writes0
	gitPerMin := float64(gs.Requests()-git0) / minutes
	memo1, full1, err := refreshCounts(reg)
	if err != nil {
		return nil, err
	}
	memoShare := 0.0
	if n := (memo1 - memo0) + (full1 - full0); n > 0 {
		memoShare = 100 * (memo1 - memo0) / n
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	goroutines := runtime.NumGoroutine()
	if err := writeHeapDump(h.cfg.FleetProfile, "steady"); err != nil {
		return nil, err
	}
	h.logf("fleet: steady %.1f min: %.2f CPU s/min, %.0f API requests/min, %d writes, %.1f Git requests/min, heap %.1f MiB in use (%.1f MiB live), %d goroutines, %.0f refreshes (%.1f%% memoized)",
		minutes, cpuPerMin, apiPerMin, steadyWrites, gitPerMin, float64(ms.HeapInuse)/(1<<20), float64(ms.HeapAlloc)/(1<<20), goroutines, (memo1-memo0)+(full1-full0), memoShare)
	name := fmt.Sprintf("%d apps, 5 objects each", n)
	coldSteady := []Row{
		{Section: "fleet", Measure: name + ": cold start to all Synced and Healthy", Ours: cold.Seconds(), Unit: Seconds},
		{Section: "fleet", Measure: name + ": steady state, CPU seconds per minute", Ours: cpuPerMin, Unit: Seconds},
		{Section: "fleet", Measure: name + ": steady state, API requests per minute", Ours: apiPerMin, Unit: Requests},
		{Section: "fleet", Measure: name + ": steady state, writes", Ours: float64(steadyWrites), Unit: Writes, Target: "0 (issue 27)"},
		{Section: "fleet", Measure: name + ": steady state, Git requests per minute", Ours: gitPerMin, Unit: Requests},
		{Section: "fleet", Measure: name + ": steady state, refreshes answered from the refresh memo (%)", Ours: memoShare, Unit: Count},
		{Section: "fleet", Measure: name + ": heap in use (MiB)", Ours: float64(ms.HeapInuse) / (1 << 20), Unit: MiB},
		{Section: "fleet", Measure: name + ": heap in use per app (bytes; the engine's fixed costs, the in-process Git server and the harness included)", Ours: float64(ms.HeapInuse) / float64(n), Unit: Count, Target: "51,200 or less (issue 46)"},
		{Section: "fleet", Measure: name + ": live heap per app after a GC (bytes; everything in the process included)", Ours: float64(ms.HeapAlloc) / float64(n), Unit: Count},
		{Section: "fleet", Measure: name + ": goroutines", Ours: float64(goroutines), Unit: Count},
	}
	if h.cfg.FleetSteadyOnly {
		return coldSteady, nil
	}

	// A commit touching 1% of the apps, announced as a webhook would (Hint).
	touched := max(1, n/100)
	changes := map[string][]byte{}
	idx := make([]int, touched)
	for k := range touched {
		i := k * (n / touched)
		idx[k] = i
		changes[fmt.Sprintf("apps/a%05d/cm.yaml", i)] = []byte(fleetApp(i, "2")["cm.yaml"])
	}
	renders0, err := renderMisses(reg)
	if err != nil {
		return nil, err
	}
	rev, err := gs.Commit(ctx, "fleet", "touch 1%", changes)
	if err != nil {
		return nil, err
	}
	t1 := time.Now()
	e.Apps().Hint(repo)
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, h.cfg.FleetTimeout, true, ready(idx, rev)); err != nil {
		return nil, fmt.Errorf("1%% commit: %d apps not Synced at %s within %s: %w", touched, rev, h.cfg.FleetTimeout, err)
	}
	onePercent := time.Since(t1)
	// Every app moves to the new revision; only the touched ones render.
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, h.cfg.FleetTimeout, true, ready(all, rev)); err != nil {
		return nil, fmt.Errorf("1%% commit: not every app at %s within %s: %w", rev, h.cfg.FleetTimeout, err)
	}
	renders1, err := renderMisses(reg)
	if err != nil {
		return nil, err
	}
	renders := renders1 - renders0
	h.logf("fleet: 1%% commit (%d apps) Synced in %s, %.0f renders", touched, onePercent.Round(time.Millisecond), renders)

	// A commit touching every app (a shared base changed).
	for i := range n {
		changes[fmt.Sprintf("apps/a%05d/cm.yaml", i)] = []byte(fleetApp(i, "3")["cm.yaml"])
	}
	if rev, err = gs.Commit(ctx, "fleet", "touch all", changes); err != nil {
		return nil, err
	}
	if prof, err = startPhase(h.cfg.FleetProfile, "all"); err != nil {
		return nil, err
	}
	t2 := time.Now()
	e.Apps().Hint(repo)
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, h.cfg.FleetTimeout, true, ready(all, rev)); err != nil {
		return nil, fmt.Errorf("all-apps commit: not every app Synced at %s within %s: %w", rev, h.cfg.FleetTimeout, err)
	}
	allApps := time.Since(t2)
	if err := prof.stop(); err != nil {
		return nil, err
	}
	h.logf("fleet: all-apps commit Synced in %s", allApps.Round(time.Millisecond))

	// A restart: a new engine (empty process caches) over the same Redis
	// render store and Git cache; nothing changed in Git or the cluster.
	stop()
	<-done
	e.Close()
	api2 := &writeCounter{}
	opts.Clusters[0].Config = h.restConfig(api2)
	opts.Registerer = prometheus.NewRegistry()
	opts.RenderStore = rds.tiered() // the new process's own near tier starts empty
	if e, err = gitops.New(opts); err != nil {
		return nil, err
	}
	runCtx, stop = context.WithCancel(ctx)
	defer stop() // also stopped (and waited for) by the deferred function above
	done = make(chan error, 1)
	t3 := time.Now()
	go func() { done <- e.Run(runCtx, apps) }()
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, h.cfg.FleetTimeout, true, ready(all, rev)); err != nil {
		return nil, fmt.Errorf("restart: not every app Synced at %s within %s: %w", rev, h.cfg.FleetTimeout, err)
	}
	restart := time.Since(t3)
	restartRenders, err := renderMisses(opts.Registerer.(*prometheus.Registry))
	if err != nil {
		return nil, err
	}
	restartWrites := api2.count()
	h.logf("fleet: restart with a warm Redis render store: all Synced in %s, %d writes %v, %.0f renders", restart.Round(time.Millisecond), restartWrites, api2.named(), restartRenders)

	// The cluster floor: the engine's processes stopped, a bare client
	// applies apps of the same shape as fast as the cluster takes them.
	var floorRows []Row
	if floorApps > 0 {
		if floors == nil {
			stop()
			<-done
			ended := make(chan error)
			close(ended)
			done = ended // the deferred stop waits on done again
			e.Close()
			f, err := h.measureFloors(ctx, floorApps, false, h.cfg.FleetWatchedFloor)
			if err != nil {
				return nil, err
			}
			floors = &f
		}
		floorRate := float64(floorApps) / floors.floor.Seconds()
		floorDryRate := float64(floorApps) / floors.dry.Seconds()
		coldRate := float64(n) / cold.Seconds()
		where := "same cluster, same run"
		if h.cfg.FleetFloorFirst {
			where = "empty cluster before the fleet, same run"
		}
		h.logf("fleet: cluster floor (%s): a bare client's %d apps all Available in %s (%.2f apps/s); with a dry-run of each app first (the engine's requests) in %s (%.2f apps/s; %s); the engine's cold start: %.2f apps/s",
			where, floorApps, floors.floor.Round(time.Millisecond), floorRate, floors.dry.Round(time.Millisecond), floorDryRate, floors.dryRequests, coldRate)
		floorRows = []Row{
			{Section: "fleet", Measure: fmt.Sprintf("cluster floor: %d apps server-side applied by a bare client (%d at once, no dry-run, no reads), time to all Available", floorApps, floorWorkers), Ours: floors.floor.Seconds(), Unit: Seconds},
			{Section: "fleet", Measure: fmt.Sprintf("%d apps: cold start rate against the cluster floor's", n), Ours: coldRate, Theirs: floorRate, TheirName: "bare client, " + where, Unit: AppsPerSec, Target: "0.8 or more (issue 37)"},
			{Section: "fleet", Measure: fmt.Sprintf("same-requests floor: %d apps dry-run then server-side applied by a bare client (%d at once), time to all Available", floorApps, floorWorkers), Ours: floors.dry.Seconds(), Unit: Seconds},
			{Section: "fleet", Measure: fmt.Sprintf("%d apps: cold start rate against the same-requests floor's", n), Ours: coldRate, Theirs: floorDryRate, TheirName: "bare client dry-running then applying, " + where, Unit: AppsPerSec, Target: "0.95 or more (issue 37)"},
		}
		if floors.watched > 0 {
			watchedRate := float64(floorApps) / floors.watched.Seconds()
			h.logf("fleet: with a cluster cache watching the cluster, the same-requests floor's %d apps all Available in %s (%.2f apps/s)", floorApps, floors.watched.Round(time.Millisecond), watchedRate)
			floorRows = append(floorRows,
				Row{Section: "fleet", Measure: fmt.Sprintf("watched same-requests floor: %d apps dry-run then server-side applied by a bare client (%d at once) beside a cluster cache watching the cluster, time to all Available", floorApps, floorWorkers), Ours: floors.watched.Seconds(), Unit: Seconds},
				Row{Section: "fleet", Measure: fmt.Sprintf("%d apps: cold start rate against the watched same-requests floor's", n), Ours: coldRate, Theirs: watchedRate, TheirName: "bare client dry-running then applying beside a watching cache, " + where, Unit: AppsPerSec})
		}
		floorRows = append(floorRows, h.fleetCPURows(n, floorApps, coldCPU, *floors, where)...)
	}

	return append(append(coldSteady,
		Row{Section: "fleet", Measure: fmt.Sprintf("%s: 1%% commit (%d apps), time to those Synced", name, touched), Ours: onePercent.Seconds(), Unit: Seconds, Target: "10 s or less (issue 27)"},
		Row{Section: "fleet", Measure: fmt.Sprintf("%s: 1%% commit (%d apps), renders", name, touched), Ours: renders, Unit: Count, Target: fmt.Sprintf("exactly %d", touched)},
		Row{Section: "fleet", Measure: name + ": all-apps commit, time to all Synced", Ours: allApps.Seconds(), Unit: Seconds},
		Row{Section: "fleet", Measure: name + ": restart, warm Redis render store, time to all Synced", Ours: restart.Seconds(), Unit: Seconds},
		Row{Section: "fleet", Measure: name + ": restart, warm Redis render store, writes", Ours: float64(restartWrites), Unit: Writes, Target: "0 (issue 27)"},
		Row{Section: "fleet", Measure: name + ": restart, warm Redis render store, renders", Ours: restartRenders, Unit: Count, Target: "0"},
	), floorRows...), nil
}

// fleetReady reports whether the apps idx of e's Run are Synced and
// Healthy at rev; an ended Run is an error.
func fleetReady(e *gitops.Engine, apps []gitops.Application, idx []int, rev string, done <-chan error) func(context.Context) (bool, error) {
	ready := func(i int) bool {
		st, ok := e.Apps().AppStatus(v1alpha1.KeyOf(&apps[i]))
		return ok && st.Sync == appstatus.Synced && st.Health.Code == health.Healthy && strings.HasPrefix(st.Revision, rev)
	}
	// A poll resumes at the first app the last one found not ready, so
	// that polling 10,000 apps does not take the CPU the engine and the
	// cluster share; once the rest are ready, every app is checked again,
	// so that an app that left the state since counts.
	from := 0
	return func(context.Context) (bool, error) {
		select {
		case err := <-done:
			return false, fmt.Errorf("Engine.Run ended: %w", err)
		default:
		}
		for k := from; k < len(idx); k++ {
			if !ready(idx[k]) {
				from = k
				return false, nil
			}
		}
		for k, i := range idx {
			if !ready(i) {
				from = k
				return false, nil
			}
		}
		return true, nil
	}
}

// renderMisses is the number of renders that ran (cache misses) so far.
func renderMisses(reg *prometheus.Registry) (float64, error) {
	return counterValue(reg, "gitops_render_requests_total", "result", "miss")
}

// refreshCounts is the engine's memoized and rendered refreshes so far
// (gitops_refresh_total).
func refreshCounts(reg *prometheus.Registry) (memoized, rendered float64, err error) {
	if memoized, err = counterValue(reg, "gitops_refresh_total", "how", "memoized"); err != nil {
		return 0, 0, err
	}
	rendered, err = counterValue(reg, "gitops_refresh_total", "how", "rendered")
	return memoized, rendered, err
}

// counterValue is the value of counter name's series whose label is
// value (0 when there is none yet).
func counterValue(reg *prometheus.Registry, name, label, value string) (float64, error) {
	mfs, err := reg.Gather()
	if err != nil {
		return 0, err
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetCounter().GetValue(), nil
				}
			}
		}
	}
	return 0, nil
}

// processCPU is the user and system CPU time this process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// qpsName says what an engine's Options.QPS means.
func qpsName(qps float32) string {
	switch {
	case qps < 0:
		return "unlimited (client-side)"
	case qps == 0:
		return "the engine's default"
	}
	return fmt.Sprintf("%g", qps)
}
