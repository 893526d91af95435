package main

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	gosync "sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
)

// healWrites are the Application writes of the healed apps.
type healWrites struct {
	writes    float64 // per healed app
	perChange float64 // per change a user sees
	noops     int     // that changed nothing
}

// heals deletes the ConfigMap of up to cfg.OperatorHealSample apps that
// moved and as many that kept their owner, all at once, and returns each
// one's time until its owner recreated it, then the Application writes
// of the healed apps once all are Synced again.
func (r *operatorRun) heals(ctx context.Context, moved []string) (movedTimes, stayedTimes []time.Duration, hw healWrites, err error) {
	seen, _ := r.watch.snapshot()
	var stayed []string
	for name := range seen {
		if !slices.Contains(moved, name) {
			stayed = append(stayed, name)
		}
	}
	sort.Strings(stayed)
	k := min(r.h.cfg.OperatorHealSample, len(moved), len(stayed))
	if k == 0 {
		return nil, nil, hw, fmt.Errorf("heal: %d apps moved and %d kept their owner: nothing to compare", len(moved), len(stayed))
	}
	sample := append(append([]string(nil), moved[:k]...), stayed[:k]...)
	started := map[string]string{}
	for _, name := range sample {
		started[name] = seen[name].opStarted
	}
	r.watch.reset()
	times := make([]time.Duration, len(sample))
	var wg gosync.WaitGroup
	errs := make([]error, len(sample))
	for i, app := range sample {
		wg.Go(func() { times[i], errs[i] = r.healOne(ctx, app) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, nil, hw, err
		}
	}
	if err := r.converge(ctx, "heal", nil); err != nil {
		return nil, nil, hw, err
	}
	// An app healed without leaving Synced converges at once: the phase
	// ends when each healed app's self-heal result is written too, so
	// that its writes are counted here and not in the next phase.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, r.h.cfg.FleetTimeout, true, func(context.Context) (bool, error) {
		now, err := r.watch.snapshot()
		if err != nil {
			return false, err
		}
		for _, name := range sample {
			if now[name].opStarted == started[name] {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, nil, hw, fmt.Errorf("heal: not every healed app's sync result was written: %w", err)
	}
	seen, _ = r.watch.snapshot()
	hw = healWrites{writes: writesOf(seen, sample), perChange: writesPerChange(seen, sample), noops: noopsOf(seen, nil)}
	r.h.logf("operators: heal: %d moved apps in %s (mean), %d that kept their owner in %s (mean); %.2f writes per healed app, %.2f per visible change, %d that changed nothing; writes by what they changed: %s",
		k, mean(times[:k]).Round(time.Millisecond), k, mean(times[k:]).Round(time.Millisecond), hw.writes, hw.perChange, hw.noops, r.watch.writeKinds())
	return times[:k], times[k:], hw, nil
}

// healOne deletes app's ConfigMap and returns the time until it exists
// again.
func (r *operatorRun) healOne(ctx context.Context, app string) (time.Duration, error) {
	u, err := r.dyn.Resource(gvrApplications).Namespace(r.ns).Get(ctx, app, metav1.GetOptions{})
	if err != nil {
		return 0, err
	}
	dest, _, _ := unstructured.NestedString(u.Object, "spec", "destination", "namespace")
	path, _, _ := unstructured.NestedString(u.Object, "spec", "source", "path")
	cm := strings.TrimPrefix(path, "apps/")
	res := r.dyn.Resource(gvrConfigMaps).Namespace(dest)
	old, err := res.Get(ctx, cm, metav1.GetOptions{})
	if err != nil {
		return 0, fmt.Errorf("heal: ConfigMap %s/%s of %s: %w", dest, cm, app, err)
	}
	start := time.Now()
	if err := res.Delete(ctx, cm, metav1.DeleteOptions{}); err != nil {
		return 0, fmt.Errorf("heal: delete ConfigMap %s/%s: %w", dest, cm, err)
	}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, r.h.cfg.FleetTimeout, true, func(ctx context.Context) (bool, error) {
		got, err := res.Get(ctx, cm, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil && got.GetUID() != old.GetUID(), nil
	})
	if err != nil {
		return 0, fmt.Errorf("heal: ConfigMap %s/%s of %s not recreated: %w", dest, cm, app, err)
	}
	return time.Since(start), nil
}

// mean is the mean of ds in seconds.
func mean(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var total time.Duration
	for _, d := range ds {
		total += d
	}
	return total / time.Duration(len(ds))
}
