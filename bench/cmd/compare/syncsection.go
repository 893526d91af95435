package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/kubegitops/gitops/cache"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	fluxssa "github.com/fluxcd/pkg/ssa"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/resource"
	gsync "github.com/kubegitops/gitops/sync"
	"github.com/kubegitops/gitops/testenv"
)

// syncObjects returns n objects for namespace ns: half ConfigMaps (about
// 250 bytes of data), half Deployments with no replicas, so that writes
// are compared, not the scheduler.
func syncObjects(ns string, n int) ([]*unstructured.Unstructured, error) {
	var sb strings.Builder
	for i := 0; i < (n+1)/2; i++ {
		fmt.Fprintf(&sb, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d, namespace: %s}\ndata: {payload: %q}\n---\n", i, ns, strings.Repeat("x", 250))
		if 2*i+1 < n {
			fmt.Fprintf(&sb, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d-%d, namespace: %s}\nspec:\n  replicas: 0\n  selector: {matchLabels: {app: d-%d}}\n  template:\n    metadata: {labels: {app: d-%d}}\n    spec: {containers: [{name: c, image: nginx}]}\n---\n", i, ns, i, i)
		}
	}
	return resource.Decode("sync.yaml", []byte(sb.String()), resource.DefaultDecodeOptions())
}

// sameRequestsFloor names the sync section's second floor: a bare client
// sending the requests Sync's first sync sends (applyFloorDryRun).
const sameRequestsFloor = "floor+dry"

// sameRequestsLabel is the second floor's name in the table.
const sameRequestsLabel = "floor with dry-run (same requests)"

// contender is one way of applying the objects: first into a fresh
// namespace, then again (the resync).
type contender struct {
	name  string
	apply func(ctx context.Context, ns string, objs []*unstructured.Unstructured) error
	// writes counts the writes of the Go clients; nil for kubectl.
	writes *writeCounter
}

// syncSection measures first sync and resync of cfg.SyncObjects objects
// with the floor, the same-requests floor, Sync, kubectl and Flux, back to back, cfg.Repeat times
// (the order rotated each time), and reports medians.
func (h *harness) syncSection(ctx context.Context) ([]Row, error) {
	dyn, err := h.dynamic(nil)
	if err != nil {
		return nil, err
	}
	kubectl, err := testenv.EnsureKubectl(ctx, testenv.DefaultBuildOptions())
	if err != nil {
		return nil, err
	}
	workDir, err := os.MkdirTemp("", "bench-sync-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(workDir)

	floor := &contender{name: "floor", writes: &writeCounter{}}
	floorDyn, err := h.dynamic(floor.writes)
	if err != nil {
		return nil, err
	}
	floor.apply = func(ctx context.Context, _ string, objs []*unstructured.Unstructured) error {
		return applyFloor(ctx, floorDyn, objs, h.cfg.Workers)
	}

	// The second floor sends the same requests as Sync's first sync: a
	// dry-run of every object, then the applies.
	floorDry := &contender{name: sameRequestsFloor, writes: &writeCounter{}}
	floorDryDyn, err := h.dynamic(floorDry.writes)
	if err != nil {
		return nil, err
	}
	floorDry.apply = func(ctx context.Context, _ string, objs []*unstructured.Unstructured) error {
		return applyFloorDryRun(ctx, floorDryDyn, objs, gsync.DefaultOptions().DryRunParallelism, h.cfg.Workers)
	}

	ours := &contender{name: "Sync", writes: &writeCounter{}}
	// As in the engine, the cluster cache tells the syncer which live
	// objects an app manages (otherwise the syncer lists every kind to
	// find them: about 65 requests per sync here). The cache watches the
	// whole cluster for the whole section, so its load falls on every
	// contender alike.
	live, err := h.watchCluster(ctx)
	if err != nil {
		return nil, err
	}
	defer live.Stop()
	syncer, err := h.newSyncer(ours.writes, live)
	if err != nil {
		return nil, err
	}
	ours.apply = func(ctx context.Context, ns string, objs []*unstructured.Unstructured) error {
		res, err := syncer.Sync(ctx, gsync.Request{App: "bench-" + ns, Desired: objs, Namespace: ns})
		if err != nil {
			return err
		}
		if res.Phase != gsync.Succeeded {
			return fmt.Errorf("Sync ended %s: %s", res.Phase, res.Message)
		}
		return nil
	}

	kube := &contender{name: "kubectl"}
	kube.apply = func(ctx context.Context, ns string, objs []*unstructured.Unstructured) error {
		return kubectlApply(ctx, kubectl, h.cluster.Kubeconfig(), filepath.Join(workDir, ns+".json"), objs)
	}

	flux := &contender{name: "Flux ssa", writes: &writeCounter{}}
	manager, _, err := h.fluxManager(flux.writes, "kustomize-controller")
	if err != nil {
		return nil, err
	}
	flux.apply = func(ctx context.Context, _ string, objs []*unstructured.Unstructured) error {
		opts := fluxssa.DefaultApplyOptions()
		opts.Force = true
		_, err := manager.ApplyAllStaged(ctx, objs, opts)
		return err
	}

	all := []*contender{floor, floorDry, ours, kube, flux}
	first := map[string][]time.Duration{}
	again := map[string][]time.Duration{}
	againWrites := map[string][]float64{}
	firstRequests := map[string][]float64{}
	// The control plane's CPU (API server and etcd) during each first
	// sync: what the cluster had to do for each contender's requests.
	firstCPU := map[string][]float64{}
	// This process's CPU (the in-process clients and the cluster cache
	// every contender shares) during each first sync.
	selfCPU := map[string][]float64{}
	var namespaces []string
	defer func() { deleteNamespaces(dyn, namespaces) }()
	for rep := range h.cfg.Repeat {
		order := append(append([]*contender(nil), all[rep%len(all):]...), all[:rep%len(all)]...)
		for _, c := range order {
			ns, err := h.createNamespace(ctx, dyn, "bench-sync")
			if err != nil {
				return nil, err
			}
			namespaces = append(namespaces, ns)
			objs, err := syncObjects(ns, h.cfg.SyncObjects)
			if err != nil {
				return nil, err
			}
			reqBefore, verbsBefore := c.writes.requestCount(), c.writes.verbSnapshot()
			cpuBefore := h.readCPU()
			start := time.Now()
			if err := c.apply(ctx, ns, objs); err != nil {
				return nil, fmt.Errorf("%s, first sync: %w", c.name, err)
			}
			d1 := time.Since(start)
			used := h.readCPU().since(cpuBefore)
			if used.ok {
				firstCPU[c.name] = append(firstCPU[c.name], used.controlPlane)
			}
			selfCPU[c.name] = append(selfCPU[c.name], used.self)
			if c.writes != nil {
				firstRequests[c.name] = append(firstRequests[c.name], float64(c.writes.requestCount()-reqBefore))
				h.logf("sync run %d %-8s first sync's requests: %s", rep+1, c.name, c.writes.verbsSince(verbsBefore))
			}
			before := c.writes.count()
			start = time.Now()
			if err := c.apply(ctx, ns, objs); err != nil {
				return nil, fmt.Errorf("%s, resync: %w", c.name, err)
			}
			d2 := time.Since(start)
			w := float64(c.writes.count() - before)
			first[c.name] = append(first[c.name], d1)
			again[c.name] = append(again[c.name], d2)
			written := "writes not counted"
			if c.writes != nil {
				againWrites[c.name] = append(againWrites[c.name], w)
				written = fmt.Sprintf("%.0f writes", w)
			}
			h.logf("sync run %d %-8s first %6.3f s, resync %6.3f s (%s)", rep+1, c.name, d1.Seconds(), d2.Seconds(), written)
		}
	}

	// paired returns the median over runs of Sync's time over c's.
	paired := func(times map[string][]time.Duration, c string) float64 {
		var rs []float64
		for i := range times[c] {
			rs = append(rs, times["Sync"][i].Seconds()/times[c][i].Seconds())
		}
		return median(rs)
	}
	n := h.cfg.SyncObjects
	o1, o2 := medianDuration(first["Sync"]), medianDuration(again["Sync"])
	ow := median(againWrites["Sync"])
	var rows []Row
	for _, c := range []struct{ name, firstTarget, againTarget string }{
		{"floor", "1.3 or less (issue 8)", ""},
		{sameRequestsFloor, "", ""},
		{"kubectl", "0.33 or less (3x faster, issue 8)", ""},
		{"Flux ssa", "", ""},
	} {
		label := c.name
		if c.name == "Flux ssa" {
			label = "Flux ssa ApplyAllStaged"
		}
		if c.name == "kubectl" {
			label = "kubectl apply --server-side"
		}
		if c.name == sameRequestsFloor {
			label = sameRequestsLabel
		}
		rows = append(rows,
			Row{Section: "sync", Measure: fmt.Sprintf("first sync, %d objects", n), Ours: o1, Theirs: medianDuration(first[c.name]), TheirName: label, Unit: Seconds, Target: c.firstTarget, PairedRatio: paired(first, c.name)},
			Row{Section: "sync", Measure: fmt.Sprintf("resync, %d objects in sync", n), Ours: o2, Theirs: medianDuration(again[c.name]), TheirName: label, Unit: Seconds, Target: c.againTarget, PairedRatio: paired(again, c.name)},
		)
		if len(firstCPU[c.name]) > 0 {
			rows = append(rows, Row{Section: "sync", Measure: "API server and etcd CPU during the first sync", Ours: median(firstCPU["Sync"]), Theirs: median(firstCPU[c.name]), TheirName: label, Unit: CPUSeconds, PairedRatio: pairedValues(firstCPU, c.name)})
		}
		if c.name != "kubectl" {
			rows = append(rows,
				Row{Section: "sync", Measure: "this process's CPU during the first sync (the client, and the cluster cache all share)", Ours: median(selfCPU["Sync"]), Theirs: median(selfCPU[c.name]), TheirName: label, Unit: CPUSeconds, PairedRatio: pairedValues(selfCPU, c.name)},
				Row{Section: "sync", Measure: "requests sent by the first sync", Ours: median(firstRequests["Sync"]), Theirs: median(firstRequests[c.name]), TheirName: label, Unit: Requests},
				Row{Section: "sync", Measure: "writes sent by the resync", Ours: ow, Theirs: median(againWrites[c.name]), TheirName: label, Unit: Writes, Target: "0 (issue 8)"})
		}
	}
	if bound, ok := dryRunBound(first, firstCPU, selfCPU); ok {
		h.logf("sync: a dry-run, then an apply, of every object cost the API server and etcd at least %.2f CPU s, and the floor's client side %.2f CPU s; on %d cores that is at least %.2f s of wall time, so no sync that dry-runs every object first can take less than %.2fx the floor's %.2f s here (medians over the runs; the ratio is the median of each run's)",
			bound.cpu, bound.client, runtime.NumCPU(), bound.wall, bound.ratio, bound.floor)
		rows = append(rows, Row{Section: "sync", Measure: fmt.Sprintf("first sync, %d objects: least ratio to the floor of any client that dry-runs every object first ((least control-plane CPU of those requests + the floor client side's CPU) / (%d cores x floor time))", n, runtime.NumCPU()),
			Ours: bound.ratio, Unit: Times, Target: "at most 1.3, or issue 37's 1.3x cannot be met here"})
	}
	return rows, nil
}

// pairedValues returns the median over runs of Sync's value over c's.
func pairedValues(values map[string][]float64, c string) float64 {
	var rs []float64
	for i := range min(len(values[c]), len(values["Sync"])) {
		if values[c][i] > 0 {
			rs = append(rs, values["Sync"][i]/values[c][i])
		}
	}
	if len(rs) == 0 {
		return 0
	}
	return median(rs)
}

// syncBound is the least time any client that dry-runs every object
// before writing can take on this machine.
type syncBound struct {
	cpu    float64 // least control-plane CPU s of a dry-run-first sync
	client float64 // this process's CPU s during the floor's first sync
	wall   float64 // the least wall time that CPU takes on this machine's cores
	floor  float64 // the floor's (apply only) time, s
	ratio  float64 // wall / floor: the least first-sync ratio
}

// dryRunBound derives a lower bound on the first-sync ratio of any
// client that dry-runs every object before it applies it, run by run
// (medians over the runs). Such a client makes the API server and etcd do
// at least the least work they did in that run for Sync or for the
// same-requests floor (both send a dry-run and an apply of every object),
// and its own side costs at least what the floor's did (it sends the
// floor's applies and more, beside the same cluster cache). Neither can be
// spread over more than this machine's cores, so its wall time is at least
// their sum divided by the cores.
func dryRunBound(first map[string][]time.Duration, cpu, self map[string][]float64) (syncBound, bool) {
	n := min(len(cpu[sameRequestsFloor]), len(cpu["Sync"]), len(self["floor"]), len(first["floor"]))
	var cs, clients, walls, floors, ratios []float64
	for i := range n {
		floor := first["floor"][i].Seconds()
		if floor <= 0 {
			continue
		}
		c := min(cpu[sameRequestsFloor][i], cpu["Sync"][i])
		wall := (c + self["floor"][i]) / float64(runtime.NumCPU())
		cs, clients, walls, floors = append(cs, c), append(clients, self["floor"][i]), append(walls, wall), append(floors, floor)
		ratios = append(ratios, wall/floor)
	}
	if len(ratios) == 0 {
		return syncBound{}, false
	}
	return syncBound{cpu: median(cs), client: median(clients), wall: median(walls), floor: median(floors), ratio: median(ratios)}, true
}

// newSyncer returns a Syncer as an engine would build one for bulk
// syncs: the built-in health checker, the diff package deciding what is in
// sync, the cluster cache naming the app's live objects, no client-side
// rate limit, and no wait for the last wave (none of the alternatives waits
// for health either).
func (h *harness) newSyncer(counter *writeCounter, live *cache.ClusterCache) (*gsync.Syncer, error) {
	checker, err := health.NewChecker(health.DefaultOptions())
	if err != nil {
		return nil, err
	}
	differ, err := diff.New(diff.DefaultOptions())
	if err != nil {
		return nil, err
	}
	opts := gsync.DefaultOptions()
	opts.WaitFinalWave = false
	opts.ApplyParallelism = h.cfg.Workers
	with := gsync.Collaborators{Health: checker, InSync: gsync.DifferInSync(differ),
		ManagedObjects: func(_ context.Context, app string) ([]*unstructured.Unstructured, error) {
			return live.Managed(app), nil
		}}
	return gsync.New(h.restConfig(counter), opts, with)
}

// kubectlApply writes objs to file as a JSON stream and runs `kubectl
// apply --server-side -f file`.
func kubectlApply(ctx context.Context, kubectl, kubeconfig, file string, objs []*unstructured.Unstructured) error {
	var sb strings.Builder
	for _, o := range objs {
		data, err := json.Marshal(o.Object)
		if err != nil {
			return err
		}
		sb.Write(data)
		sb.WriteString("\n")
	}
	if err := os.WriteFile(file, []byte(sb.String()), 0o600); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", kubeconfig, "apply", "--server-side", "--force-conflicts", "-f", file)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl: %w\n%s", err, out)
	}
	return nil
}
