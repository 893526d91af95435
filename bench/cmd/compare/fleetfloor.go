package main

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"
)

// floorWorkers is how many apps the bare client of the floor applies at
// once: twice the engine's default SyncWorkers, so that the client is not
// what limits it.
const floorWorkers = 32

// floorLabel marks the floor's Deployments, so that one list finds them.
const floorLabel = "bench.kubegitops.io/floor"

// floorOrder is the order a floor app's objects are applied in: the
// ServiceAccount before the Deployment whose Pods run as it.
var floorOrder = []struct {
	file string
	gvr  schema.GroupVersionResource
}{
	{"sa.yaml", schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}},
	{"cm.yaml", gvrConfigMaps},
	{"secret.yaml", schema.GroupVersionResource{Version: "v1", Resource: "secrets"}},
	{"svc.yaml", schema.GroupVersionResource{Version: "v1", Resource: "services"}},
	{"deploy.yaml", gvrDeployments},
}

// fleetFloor measures what the cluster alone allows on these cores: a
// bare client applies n apps of the fleet's five objects (server-side
// apply, no dry-run, no reads, floorWorkers at once, no client rate
// limit) into fresh namespaces and waits until every Deployment is
// Available. n divided by that time is the most apps per second any
// engine could reach against this cluster; the engine's cold start is
// compared with it in the same run.
//
// With floorDryRun, it is the second floor, which sends the same
// requests as the engine's first sync of each app: a server-side dry-run
// of each of the app's objects (all five at once), and only when all
// passed, the same applies. The distance between the two floors is what
// the API server must do to validate every object before writing; the
// engine's distance to the second is what the engine adds. With
// floorWatched, the second floor runs beside a cluster cache watching the
// cluster (started and synced before the clock starts); its distance to
// the second is what watching costs, which every engine that keeps a live
// cache pays. counter, when not nil, counts the requests.
//
// The floor's namespaces are appended to *made, for the caller to delete
// once every floor is measured (a namespace being deleted loads the
// controllers while the next floor runs).
func (h *harness) fleetFloor(ctx context.Context, n int, kind floorKind, counter *writeCounter, made *[]string) (time.Duration, error) {
	dyn, err := h.dynamic(counter)
	if err != nil {
		return 0, err
	}
	prefix := [...]string{"floor", "floordry", "floorwatch"}[kind]
	dryRun := kind != floorApply
	nss := make([]string, min(fleetNamespaces, n))
	for i := range nss {
		if nss[i], err = h.createNamespace(ctx, dyn, fmt.Sprintf("%s-%02d", prefix, i)); err != nil {
			*made = append(*made, nss[:i]...)
			return 0, err
		}
	}
	*made = append(*made, nss...)
	objs := make([][]*unstructured.Unstructured, n)
	for i := range n {
		files := fleetApp(i, "1")
		for _, o := range floorOrder {
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(files[o.file]), &obj.Object); err != nil {
				return 0, fmt.Errorf("floor app %d %s: %w", i, o.file, err)
			}
			obj.SetNamespace(nss[i%len(nss)])
			if o.file == "deploy.yaml" {
				obj.SetLabels(map[string]string{floorLabel: "1"})
			}
			objs[i] = append(objs[i], obj)
		}
	}
	ours := map[string]bool{}
	for _, ns := range nss {
		ours[ns] = true
	}
	if kind == floorWatched {
		live, err := h.watchCluster(ctx)
		if err != nil {
			return 0, fmt.Errorf("floor: %w", err)
		}
		defer live.Stop()
	}
	start := time.Now()
	err = parallel(n, floorWorkers, func(i int) error {
		if dryRun {
			if err := parallel(len(objs[i]), len(objs[i]), func(k int) error {
				obj := objs[i][k]
				_, err := dyn.Resource(floorOrder[k].gvr).Namespace(obj.GetNamespace()).Apply(ctx, obj.GetName(), obj,
					metav1.ApplyOptions{FieldManager: "bench-floor", Force: true, DryRun: []string{metav1.DryRunAll}})
				if err != nil {
					return fmt.Errorf("floor: dry-run %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
				}
				return nil
			}); err != nil {
				return err
			}
		}
		for k, obj := range objs[i] {
			_, err := dyn.Resource(floorOrder[k].gvr).Namespace(obj.GetNamespace()).Apply(ctx, obj.GetName(), obj,
				metav1.ApplyOptions{FieldManager: "bench-floor", Force: true})
			if err != nil {
				return fmt.Errorf("floor: apply %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	available := func(ctx context.Context) (bool, error) {
		list, err := dyn.Resource(gvrDeployments).List(ctx, metav1.ListOptions{LabelSelector: floorLabel + "=1", ResourceVersion: "0"})
		if err != nil {
			if apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) {
				return false, nil
			}
			return false, err
		}
		ready := 0
		for _, d := range list.Items {
			if got, _, _ := unstructured.NestedInt64(d.Object, "status", "availableReplicas"); got >= 1 && ours[d.GetNamespace()] {
				ready++
			}
		}
		return ready == n, nil
	}
	if err := wait.PollUntilContextTimeout(ctx, time.Second, h.cfg.FleetTimeout, true, available); err != nil {
		return 0, fmt.Errorf("floor: not every Deployment of %d apps Available within %s: %w", n, h.cfg.FleetTimeout, err)
	}
	return time.Since(start), nil
}

// floorKind is one of the fleet's bare-client floors.
type floorKind int

const (
	// floorApply applies each app's objects: no dry-run, no reads.
	floorApply floorKind = iota
	// floorDryRun sends the engine's requests: a dry-run of each of an
	// app's objects, then the same applies.
	floorDryRun
	// floorWatched is floorDryRun while a cluster cache (package cache,
	// with its default options, as an engine builds one) watches the
	// whole cluster in this process: what watching costs the cluster and
	// the client, apart from what the engine adds beyond it.
	floorWatched
)

// String names the floor in the harness's log.
func (k floorKind) String() string {
	return [...]string{"no-dry-run", "same-requests", "watched same-requests"}[k]
}

// fleetFloors are the floors' times for the same number of apps.
type fleetFloors struct {
	floor, dry       time.Duration
	dryRequests      string // the same-requests floor's requests by verb
	floorCPU, dryCPU cpuUse // what each floor cost the cluster and the client
	// watched is the floorWatched floor (zero when not measured).
	watched    time.Duration
	watchedCPU cpuUse
}

// measureFloors measures the no-dry-run floor, then the same-requests
// floor, then, with watched, the watched same-requests floor. With fresh,
// each floor after the first runs on a new, empty cluster, as the first
// did (floors first); without, each floor's namespaces are kept until all
// are measured, then deleted.
func (h *harness) measureFloors(ctx context.Context, apps int, fresh, watched bool) (fleetFloors, error) {
	var nss []string
	defer func() {
		if dyn, err := h.dynamic(nil); err == nil {
			deleteNamespaces(dyn, nss)
		}
	}()
	kinds := []floorKind{floorApply, floorDryRun}
	if watched {
		kinds = append(kinds, floorWatched)
	}
	var f fleetFloors
	for i, kind := range kinds {
		if fresh && i > 0 {
			h.logf("fleet: a fresh, empty cluster for the %s floor", kind)
			if err := h.freshCluster(ctx); err != nil {
				return fleetFloors{}, err
			}
			nss = nil // gone with the cluster
		}
		var reqs *writeCounter
		if kind == floorDryRun {
			reqs = &writeCounter{}
		}
		before := h.readCPU()
		took, err := h.fleetFloor(ctx, apps, kind, reqs, &nss)
		if err != nil {
			return fleetFloors{}, err
		}
		used := h.readCPU().since(before)
		switch kind {
		case floorApply:
			f.floor, f.floorCPU = took, used
		case floorDryRun:
			f.dry, f.dryCPU, f.dryRequests = took, used, reqs.verbsSince(nil)
		case floorWatched:
			f.watched, f.watchedCPU = took, used
		}
	}
	return f, nil
}
