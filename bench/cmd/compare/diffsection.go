package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/kubegitops/gitops/internal/benchdata"
	"runtime"
	"time"

	fluxssa "github.com/fluxcd/pkg/ssa"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/resource"
)

// diffSet is desired Deployments and the same objects as the API server
// returned them after a client-side apply (last-applied annotation,
// kubectl-client-side-apply managedFields) and after a server-side apply
// by our field manager.
type diffSet struct {
	ns               string
	desired          []*unstructured.Unstructured
	liveCSA, liveSSA []*unstructured.Unstructured
}

func (h *harness) createDiffSet(ctx context.Context, dyn dynamic.Interface, n int) (*diffSet, error) {
	ns, err := h.createNamespace(ctx, dyn, "bench-diff")
	if err != nil {
		return nil, err
	}
	s := &diffSet{ns: ns, desired: make([]*unstructured.Unstructured, n),
		liveCSA: make([]*unstructured.Unstructured, n), liveSSA: make([]*unstructured.Unstructured, n)}
	ri := dyn.Resource(gvrDeployments).Namespace(ns)
	force := true
	err = parallel(n, h.cfg.Workers, func(i int) error {
		name := fmt.Sprintf("app-%04d", i)
		desired, err := benchdata.Deployment(ns, name)
		if err != nil {
			return err
		}
		s.desired[i] = desired

		// Client-side applied, under another name, compared under the
		// desired name: the objects are otherwise identical.
		csa := desired.DeepCopy()
		csa.SetName(name + "-csa")
		last, _ := json.Marshal(csa.Object)
		anns := csa.GetAnnotations()
		anns["kubectl.kubernetes.io/last-applied-configuration"] = string(last)
		csa.SetAnnotations(anns)
		live, err := ri.Create(ctx, csa, metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"})
		if err != nil {
			return fmt.Errorf("apps/Deployment %s/%s: %w", ns, csa.GetName(), err)
		}
		live.SetName(name)
		s.liveCSA[i] = live

		data, _ := json.Marshal(desired.Object)
		live, err = ri.Patch(ctx, name, types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: diff.DefaultFieldManager, Force: &force})
		if err != nil {
			return fmt.Errorf("apps/Deployment %s/%s: %w", ns, name, err)
		}
		s.liveSSA[i] = live
		return nil
	})
	return s, err
}

// perObject times fn over objects [0, n) one after the other on one
// goroutine and returns the time and allocations per object.
func perObject(n int, fn func(i int) error) (time.Duration, float64, error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	for i := 0; i < n; i++ {
		if err := fn(i); err != nil {
			return 0, 0, err
		}
	}
	d := time.Since(start)
	runtime.ReadMemStats(&after)
	return d / time.Duration(n), float64(after.Mallocs-before.Mallocs) / float64(n), nil
}

// memoMode names the row of a memoized comparison of an unchanged object.
const memoMode = "three-way, memoized (unchanged object)"

// diffSection measures each diff mode on the in-sync Deployments: time
// and allocations per object, median of cfg.Repeat passes.
func (h *harness) diffSection(ctx context.Context) ([]Row, error) {
	dyn, err := h.dynamic(nil)
	if err != nil {
		return nil, err
	}
	n := h.cfg.DiffObjects
	h.logf("creating %d Deployments twice (client-side and server-side applied)", n)
	set, err := h.createDiffSet(ctx, dyn, n)
	if err != nil {
		return nil, err
	}
	defer deleteNamespaces(dyn, []string{set.ns})
	applier, err := diff.NewDryRunApplier(h.restConfig(nil), 30*time.Second)
	if err != nil {
		return nil, err
	}
	sample := min(h.cfg.DiffDryRunSample, n)
	if sample < 1 {
		sample = min(n, 1)
	}

	type mode struct {
		name  string
		opts  func() diff.Options
		live  []*unstructured.Unstructured
		count int
	}
	withMode := func(m diff.Mode, dry bool, cacheSize int) func() diff.Options {
		return func() diff.Options {
			o := diff.DefaultOptions()
			o.Mode = m
			if dry {
				o.DryRun = applier
				o.ServerSideCacheSize = cacheSize
			}
			return o
		}
	}
	modes := []mode{
		{"three-way", withMode(diff.ModeThreeWay, false, 0), set.liveCSA, n},
		{"structured-merge", withMode(diff.ModeStructuredMerge, false, 0), set.liveSSA, n},
		{"server-side, cached dry-run", withMode(diff.ModeServerSide, true, 4*n), set.liveSSA, n},
		{"server-side, dry-run per object", withMode(diff.ModeServerSide, true, 0), set.liveSSA, sample},
	}
	figures := map[string][2]float64{} // ns/object, allocs/object
	for _, m := range modes {
		d, err := diff.New(m.opts())
		if err != nil {
			return nil, err
		}
		one := func(i int) error {
			res, err := d.Diff(ctx, set.desired[i], m.live[i])
			if err != nil {
				return err
			}
			if res.Modified {
				return fmt.Errorf("%s: %s reported out of sync: %v", m.name, resource.KeyOf(set.desired[i]), res.Changes)
			}
			return nil
		}
		// One pass to check the expectation and to fill the dry-run cache.
		if _, _, err := perObject(m.count, one); err != nil {
			return nil, err
		}
		var times, allocs []float64
		for range h.cfg.Repeat {
			t, a, err := perObject(m.count, one)
			if err != nil {
				return nil, err
			}
			times, allocs = append(times, float64(t.Nanoseconds())), append(allocs, a)
		}
		figures[m.name] = [2]float64{median(times), median(allocs)}
		h.logf("diff %s: %.1f µs, %.0f allocs per object", m.name, median(times)/1e3, median(allocs))
	}

	// Memoized: what a refresh of an unchanged object costs in the engine
	// (a diff.MemoKey of desired and live, and a lookup of the verdict the
	// first pass kept). Same objects, same order.
	{
		d, err := diff.New(withMode(diff.ModeThreeWay, false, 0)())
		if err != nil {
			return nil, err
		}
		memo := make(map[string]bool, n)
		one := func(i int) error {
			key, ok := diff.MemoKey(set.desired[i], set.liveCSA[i])
			if !ok {
				return fmt.Errorf("%s: live object has no resourceVersion", resource.KeyOf(set.desired[i]))
			}
			if _, hit := memo[key]; hit {
				return nil
			}
			res, err := d.Diff(ctx, set.desired[i], set.liveCSA[i])
			if err != nil {
				return err
			}
			memo[key] = res.Modified
			return nil
		}
		if _, _, err := perObject(n, one); err != nil {
			return nil, err
		}
		var times, allocs []float64
		for range h.cfg.Repeat {
			t, a, err := perObject(n, one)
			if err != nil {
				return nil, err
			}
			times, allocs = append(times, float64(t.Nanoseconds())), append(allocs, a)
		}
		figures[memoMode] = [2]float64{median(times), median(allocs)}
		modes = append(modes, mode{name: memoMode, count: n})
		h.logf("diff %s: %.1f µs, %.0f allocs per object", memoMode, median(times)/1e3, median(allocs))
	}

	// Flux: ResourceManager.Diff, a Get and a server-side dry-run per
	// object, with the same field manager (so the objects are in sync).
	flux, _, err := h.fluxManager(nil, diff.DefaultFieldManager)
	if err != nil {
		return nil, err
	}
	fluxOne := func(i int) error {
		entry, _, _, err := flux.Diff(ctx, set.desired[i].DeepCopy(), fluxssa.DefaultDiffOptions())
		if err != nil {
			return err
		}
		if entry.Action != fluxssa.UnchangedAction {
			return fmt.Errorf("Flux Diff: %s reported %s", entry.Subject, entry.Action)
		}
		return nil
	}
	if _, _, err := perObject(min(sample, 20), fluxOne); err != nil {
		return nil, err
	}
	var fluxTimes, fluxAllocs []float64
	for range h.cfg.Repeat {
		t, a, err := perObject(sample, fluxOne)
		if err != nil {
			return nil, err
		}
		fluxTimes, fluxAllocs = append(fluxTimes, float64(t.Nanoseconds())), append(fluxAllocs, a)
	}
	fluxNs, fluxA := median(fluxTimes), median(fluxAllocs)
	h.logf("diff Flux ssa Diff: %.1f µs, %.0f allocs per object", fluxNs/1e3, fluxA)

	// gitops-engine's three-way diff, measured on this kind of machine
	// (baselines.md): it cannot be built next to k8s.io v0.37 here.
	const geNs, geAllocs = 3.36e6, 10968
	const geRef = "baselines.md, not this run"
	var rows []Row
	for _, m := range modes {
		f := figures[m.name]
		r := Row{Section: "diff", Unit: PerSecond, Ours: 1e9 / f[0]}
		a := Row{Section: "diff", Unit: AllocsPerObj, Ours: f[1]}
		switch m.name {
		case "three-way", "structured-merge", memoMode:
			r.Theirs, r.TheirName, r.Ref, r.Target = 1e9/geNs, "gitops-engine three-way", geRef, ""
			a.Theirs, a.TheirName, a.Ref = geAllocs, "gitops-engine three-way", geRef
		default:
			r.Theirs, r.TheirName = 1e9/fluxNs, "Flux ssa Diff"
			a.Theirs, a.TheirName = fluxA, "Flux ssa Diff"
		}
		r.Measure = fmt.Sprintf("%s, %d in-sync Deployments", m.name, m.count)
		a.Measure = m.name + ", allocations"
		rows = append(rows, r, a)
	}
	return rows, nil
}
