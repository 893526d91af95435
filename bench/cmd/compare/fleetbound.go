package main

import (
	"fmt"
	"runtime"
	"time"
)

// cpuReading is the CPU time the local cluster's processes (API server,
// etcd, controller manager, scheduler, kwok), its control plane alone
// (API server and etcd) and this process had used at one moment. Two
// readings of the same cluster give what a phase cost; ok is false when
// the cluster's processes cannot be read (an attached cluster, no /proc).
type cpuReading struct {
	cluster, controlPlane, self time.Duration
	ok                          bool
}

// readCPU takes a cpuReading of the harness's current cluster.
func (h *harness) readCPU() cpuReading {
	self := processCPU()
	cpu, err := h.cluster.ProcessCPU()
	if err != nil {
		return cpuReading{self: self}
	}
	var sum time.Duration
	for _, d := range cpu {
		sum += d
	}
	return cpuReading{cluster: sum, controlPlane: cpu["kube-apiserver"] + cpu["etcd"], self: self, ok: true}
}

// cpuUse is what one phase cost in CPU seconds: the cluster's processes,
// its control plane alone, and this process (the client).
type cpuUse struct {
	cluster, controlPlane, self float64
	ok                          bool
}

// since returns the CPU used between before and r, both read from the
// same cluster.
func (r cpuReading) since(before cpuReading) cpuUse {
	return cpuUse{cluster: (r.cluster - before.cluster).Seconds(), controlPlane: (r.controlPlane - before.controlPlane).Seconds(),
		self: (r.self - before.self).Seconds(), ok: r.ok && before.ok}
}

// fleetBound is the most any client that dry-runs every object before
// writing it can reach on this machine, against the no-dry-run floor.
type fleetBound struct {
	clusterPerApp float64 // least cluster CPU s per app of a dry-run-first cold start
	clientPerApp  float64 // the no-dry-run floor's client CPU s per app
	utilisation   float64 // share of the cores the no-dry-run floor kept busy
	rate          float64 // the most apps/s such a client can reach here
	ratio         float64 // rate over the no-dry-run floor's rate
}

// dryRunFleetBound derives an upper bound on the cold-start rate of any
// client that dry-runs every object first, from the same run's figures.
// Such a client makes the cluster do at least the least work per app that
// either the engine's cold start (n apps) or the same-requests floor
// (floorApps) made it do (both send a dry-run and an apply of every
// object, and wait for the same rollouts), and its own side costs at least
// what the no-dry-run floor's client did per app. Neither can be spread
// over more than this machine's cores, so it needs at least their sum over
// the cores per app. ok is false without CPU readings.
func dryRunFleetBound(n, floorApps int, cold cpuUse, f fleetFloors) (fleetBound, bool) {
	if !cold.ok || !f.floorCPU.ok || !f.dryCPU.ok || n == 0 || floorApps == 0 || f.floor <= 0 {
		return fleetBound{}, false
	}
	cores := float64(runtime.NumCPU())
	cluster := min(cold.cluster/float64(n), f.dryCPU.cluster/float64(floorApps))
	client := f.floorCPU.self / float64(floorApps)
	if cluster+client <= 0 {
		return fleetBound{}, false
	}
	rate := cores / (cluster + client)
	floorRate := float64(floorApps) / f.floor.Seconds()
	return fleetBound{
		clusterPerApp: cluster,
		clientPerApp:  client,
		utilisation:   (f.floorCPU.cluster + f.floorCPU.self) / (cores * f.floor.Seconds()),
		rate:          rate,
		ratio:         rate / floorRate,
	}, true
}

// fleetCPURows reports the cluster's and the client's CPU per app during
// the cold start and each floor, and the bound derived from them.
func (h *harness) fleetCPURows(n, floorApps int, cold cpuUse, f fleetFloors, where string) []Row {
	if !cold.ok || !f.floorCPU.ok || !f.dryCPU.ok {
		return nil
	}
	ms := func(cpu float64, apps int) float64 { return 1000 * cpu / float64(apps) }
	rows := []Row{
		{Section: "fleet", Measure: fmt.Sprintf("%d apps: the cluster's CPU per app (API server, etcd, controllers, scheduler, kwok), cold start against the cluster floor", n),
			Ours: ms(cold.cluster, n), Theirs: ms(f.floorCPU.cluster, floorApps), TheirName: "bare client, " + where, Unit: CPUMillis},
		{Section: "fleet", Measure: fmt.Sprintf("%d apps: the cluster's CPU per app, cold start against the same-requests floor", n),
			Ours: ms(cold.cluster, n), Theirs: ms(f.dryCPU.cluster, floorApps), TheirName: "bare client dry-running then applying, " + where, Unit: CPUMillis},
		{Section: "fleet", Measure: fmt.Sprintf("%d apps: this process's CPU per app (the engine, its Git server; the bare client), cold start against the cluster floor", n),
			Ours: ms(cold.self, n), Theirs: ms(f.floorCPU.self, floorApps), TheirName: "bare client, " + where, Unit: CPUMillis},
	}
	if b, ok := dryRunFleetBound(n, floorApps, cold, f); ok {
		h.logf("fleet: the no-dry-run floor kept %.0f%% of the %d cores busy; a dry-run, then an apply, of every object cost the cluster at least %.1f CPU ms per app and the floor's client %.1f CPU ms per app, so no client that dry-runs every object first can start more than %.2f apps/s here: %.2f of the floor's rate",
			100*b.utilisation, runtime.NumCPU(), 1000*b.clusterPerApp, 1000*b.clientPerApp, b.rate, b.ratio)
		rows = append(rows, Row{Section: "fleet", Measure: fmt.Sprintf("%d apps: most cold start rate over the floor's of any client that dry-runs every object first (%d cores / (least cluster CPU per app of those requests + the floor client's CPU per app), over the floor's rate)", n, runtime.NumCPU()),
			Ours: b.ratio, Unit: Times, Target: "0.8 or more, or issue 37's 0.8 cannot be met here"})
	}
	if f.watched > 0 && f.watchedCPU.ok {
		rows = append(rows,
			Row{Section: "fleet", Measure: fmt.Sprintf("%d apps: the cluster's CPU per app, cold start against the watched same-requests floor", n),
				Ours: ms(cold.cluster, n), Theirs: ms(f.watchedCPU.cluster, floorApps), TheirName: "bare client dry-running then applying beside a watching cache, " + where, Unit: CPUMillis},
			Row{Section: "fleet", Measure: fmt.Sprintf("%d apps: this process's CPU per app, cold start against the watched same-requests floor (its client and cache)", n),
				Ours: ms(cold.self, n), Theirs: ms(f.watchedCPU.self, floorApps), TheirName: "bare client dry-running then applying beside a watching cache, " + where, Unit: CPUMillis})
		if b, ok := watchedBound(floorApps, f); ok {
			h.logf("fleet: beside a watching cluster cache, the same-requests floor cost the cluster %.1f and this process %.1f CPU ms per app (without it %.1f and %.1f), so no client that watches the cluster and dry-runs every object first can start more than %.2f apps/s here: %.2f of the same-requests floor's rate",
				1000*f.watchedCPU.cluster/float64(floorApps), 1000*f.watchedCPU.self/float64(floorApps), 1000*f.dryCPU.cluster/float64(floorApps), 1000*f.dryCPU.self/float64(floorApps), b.rate, b.ratio)
			rows = append(rows, Row{Section: "fleet", Measure: fmt.Sprintf("%d apps: most cold start rate over the same-requests floor's of any client that watches the cluster and dry-runs every object first (%d cores / (the watched floor's cluster and client CPU per app), over the same-requests floor's rate)", n, runtime.NumCPU()),
				Ours: b.ratio, Unit: Times, Target: "0.95 or more, or issue 37's 0.95 cannot be met here"})
		}
	}
	return rows
}

// watchedBound derives an upper bound on the cold-start rate of any client
// that keeps a cluster cache watching the cluster and dry-runs every object
// first: it makes the cluster and itself do at least what the watched
// same-requests floor did per app (the same requests, beside the same
// watches; an engine's cache does more per event, not less), and that
// cannot be spread over more than this machine's cores. The ratio is to
// the same-requests floor's rate.
func watchedBound(floorApps int, f fleetFloors) (fleetBound, bool) {
	perApp := (f.watchedCPU.cluster + f.watchedCPU.self) / float64(floorApps)
	if perApp <= 0 || f.dry <= 0 {
		return fleetBound{}, false
	}
	rate := float64(runtime.NumCPU()) / perApp
	return fleetBound{clusterPerApp: f.watchedCPU.cluster / float64(floorApps), clientPerApp: f.watchedCPU.self / float64(floorApps),
		rate: rate, ratio: rate / (float64(floorApps) / f.dry.Seconds())}, true
}
