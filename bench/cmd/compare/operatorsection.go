package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing/fstest"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/shard"
)

// operatorNamespaces is how many namespaces the operators' apps deploy to.
const operatorNamespaces = 10

// operatorRun is the state of one operators section run: the replicas
// alive, what the watch saw, and the most apps the replicas' metrics ever
// counted at once beyond the apps (double management).
type operatorRun struct {
	h          *harness
	n          int
	bin, dir   string
	kubeconfig string
	ns, redis  string
	dyn        dynamic.Interface
	watch      *appWatch
	live       []*operatorProc
	all        []*operatorProc
	maxExcess  int
}

// operatorsSection runs the operator (examples/operator, built before
// anything is measured) as cfg.OperatorReplicas processes with -shard and
// a shared Redis, over cfg.OperatorApps Applications of 5 objects each
// (automated sync with self-heal) from one repository on the real Git
// server, on the full local cluster, and reports: the cold start to every
// app Synced, Healthy and owned by the live replica the ring assigns it
// (shard.Assign over the live members); the same after a
// replica is killed (SIGKILL), with the first heal of a drift on apps that
// moved against apps that kept their owner; after a replica is added;
// after one is stopped (SIGTERM); in each phase the Application writes
// per app that changed, and the apps that changed owner more than once.
// At every sample the replicas' gitops_shard_apps must not add up to more
// than the apps: the excess is the double management.
func (h *harness) operatorsSection(ctx context.Context) ([]Row, error) {
	if h.cfg.Cluster != "full" {
		return nil, fmt.Errorf("the operators section needs -cluster full (kwok reports the Deployments' rollout)")
	}
	if h.cfg.OperatorReplicas < 2 {
		return nil, fmt.Errorf("-operators-replicas %d: want 2 or more", h.cfg.OperatorReplicas)
	}
	n := h.cfg.OperatorApps
	dir, err := os.MkdirTemp("", "operators-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := h.cfg.OperatorBin
	if bin == "" {
		h.logf("operators: building examples/operator")
		if bin, err = buildOperator(ctx, dir, false); err != nil {
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
	if _, err := gs.CreateRepository(ctx, "operators", files); err != nil {
		return nil, err
	}
	dyn, err := h.dynamic(nil)
	if err != nil {
		return nil, err
	}
	ns, err := h.createNamespace(ctx, dyn, "argocd")
	if err != nil {
		return nil, err
	}
	nss := []string{ns}
	dests := make([]string, min(operatorNamespaces, n))
	for i := range dests {
		if dests[i], err = h.createNamespace(ctx, dyn, fmt.Sprintf("ops-%02d", i)); err != nil {
			return nil, err
		}
		nss = append(nss, dests[i])
	}
	defer deleteNamespaces(dyn, nss)
	rds, err := startRedis(ctx)
	if err != nil {
		return nil, err
	}
	defer rds.stop()

	r := &operatorRun{h: h, n: n, bin: bin, dir: dir, kubeconfig: h.cluster.Kubeconfig(), ns: ns, redis: rds.client.Options().Addr, dyn: dyn}
	defer func() {
		for _, p := range r.all {
			p.stop()
		}
	}()
	// The first replica installs the CRDs; the others start once they are
	// served, so that every replica runs before the first app exists.
	if err := r.start("op-0", "-install-crd=true"); err != nil {
		return nil, err
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if ended, err := r.live[0].ended(); ended {
			return false, fmt.Errorf("operator op-0 ended: %v\n%s", err, r.live[0].tail(20))
		}
		_, err := dyn.Resource(gvrApplications).Namespace(ns).List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil, nil
	})
	if err != nil {
		return nil, fmt.Errorf("the Applications CRD was not served: %w", err)
	}
	for i := 1; i < h.cfg.OperatorReplicas; i++ {
		if err := r.start(fmt.Sprintf("op-%d", i), "-install-crd=false"); err != nil {
			return nil, err
		}
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if r.watch, err = watchApps(watchCtx, dyn, ns); err != nil {
		return nil, err
	}

	// Cold start.
	h.logf("operators: %d apps of 5 objects over %d namespaces, %d replicas", n, len(dests), len(r.live))
	start := time.Now()
	repo := gs.RepoURL("operators")
	err = parallel(n, 8, func(i int) error {
		_, err := dyn.Resource(gvrApplications).Namespace(ns).Create(ctx, operatorApp(i, repo, gs.Branch(), dests[i%len(dests)]), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create the Applications: %w", err)
	}
	if err := r.converge(ctx, "cold start", nil); err != nil {
		return nil, err
	}
	cold := time.Since(start)
	seen, _ := r.watch.snapshot()
	coldWrites, coldNoops, coldPerChange := writesOf(seen, nil), noopsOf(seen, nil), writesPerChange(seen, nil)
	h.logf("operators: cold start to %d apps Synced, Healthy and owned in %s; %s; %.1f writes per app, %d that changed nothing, %.2f per visible change; writes by what they changed: %s",
		n, cold.Round(time.Millisecond), r.shares(seen), coldWrites, coldNoops, coldPerChange, r.watch.writeKinds())

	// A replica killed.
	killed, err := r.phase(ctx, "SIGKILL", func() error { return r.end(len(r.live)-1, syscall.SIGKILL) })
	if err != nil {
		return nil, err
	}
	// The first heal of apps that moved against apps that kept their owner.
	movedHeal, stayedHeal, heal, err := r.heals(ctx, killed.moved)
	if err != nil {
		return nil, err
	}
	added, err := r.phase(ctx, "replica added", func() error {
		return r.start(fmt.Sprintf("op-%d", len(r.all)), "-install-crd=false")
	})
	if err != nil {
		return nil, err
	}
	// The first replica stopped: it holds the control Lease gitops-operator.
	stopped, err := r.phase(ctx, "SIGTERM", func() error { return r.end(0, syscall.SIGTERM) })
	if err != nil {
		return nil, err
	}

	name := fmt.Sprintf("%d apps, %d operator replicas", n, h.cfg.OperatorReplicas)
	rows := []Row{
		{Section: "operators", Measure: name + ": cold start to all Synced, Healthy and owned by the replica the ring assigns", Ours: cold.Seconds(), Unit: Seconds},
		{Section: "operators", Measure: name + ": cold start, Application writes per app", Ours: coldWrites, Unit: Writes},
		{Section: "operators", Measure: name + ": cold start, Application writes per change a user sees (owner, sync status or revision, health, operation phase)", Ours: coldPerChange, Unit: Writes, Target: "1"},
		{Section: "operators", Measure: name + ": cold start, Application writes that changed nothing", Ours: float64(coldNoops), Unit: Count, Target: "0"},
	}
	rows = append(rows, killed.rows(name, "a replica killed (SIGKILL)")...)
	rows = append(rows,
		Row{Section: "operators", Measure: fmt.Sprintf("%s: first heal of a deleted ConfigMap, %d apps that moved at the kill (mean) against %d that kept their owner", name, len(movedHeal), len(stayedHeal)), Ours: mean(movedHeal).Seconds(), Theirs: mean(stayedHeal).Seconds(), TheirName: "apps that kept their owner, same run", Unit: Seconds, Target: "2x or less (issue 46)"},
		Row{Section: "operators", Measure: name + ": heal, Application writes per healed app", Ours: heal.writes, Unit: Writes},
		Row{Section: "operators", Measure: name + ": heal, Application writes per change a user sees", Ours: heal.perChange, Unit: Writes, Target: "1"},
		Row{Section: "operators", Measure: name + ": heal, Application writes that changed nothing", Ours: float64(heal.noops), Unit: Count, Target: "0"},
	)
	rows = append(rows, added.rows(name, "a replica added")...)
	rows = append(rows, stopped.rows(name, "a replica stopped (SIGTERM)")...)
	rows = append(rows, Row{Section: "operators", Measure: name + ": double management, most apps counted by the replicas' gitops_shard_apps at one sample beyond the apps", Ours: float64(r.maxExcess), Unit: Count, Target: "0"})
	return rows, nil
}

// operatorApp is Application i of the operators' repository: 5 objects,
// automated sync with prune and self-heal.
func operatorApp(i int, repo, branch, dest string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": fmt.Sprintf("ops-%05d", i)},
		"spec": map[string]any{
			"project":     "default",
			"source":      map[string]any{"repoURL": repo, "path": fmt.Sprintf("apps/a%05d", i), "targetRevision": branch},
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": dest},
			"syncPolicy":  map[string]any{"automated": map[string]any{"prune": true, "selfHeal": true}},
		},
	}}
}

// start starts replica id.
func (r *operatorRun) start(id string, extra ...string) error {
	p, err := startOperator(r.bin, r.dir, r.kubeconfig, r.ns, id, r.redis, extra...)
	if err != nil {
		return err
	}
	r.live = append(r.live, p)
	r.all = append(r.all, p)
	return nil
}

// end sends sig to live replica i and takes it out of the live ones once
// it ended.
func (r *operatorRun) end(i int, sig syscall.Signal) error {
	p := r.live[i]
	r.live = slices.Delete(r.live, i, i+1)
	return p.signal(sig, 30*time.Second)
}

// liveIDs are the live replicas' names.
func (r *operatorRun) liveIDs() []string {
	ids := make([]string, len(r.live))
	for i, p := range r.live {
		ids[i] = p.id
	}
	return ids
}

// converge waits until every app is Synced, Healthy and owned by the live
// replica package shard's ring assigns it (and, when must is set, the
// replica must owns one), and the live
// replicas' gitops_shard_apps add up to the apps. Every sample records
// how far that sum went beyond the apps.
func (r *operatorRun) converge(ctx context.Context, what string, must *operatorProc) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, r.h.cfg.FleetTimeout, true, func(ctx context.Context) (bool, error) {
		sum, answered := 0, true
		for _, p := range r.live {
			if ended, err := p.ended(); ended {
				return false, fmt.Errorf("operator %s ended: %v\n%s", p.id, err, p.tail(20))
			}
			k, ok := p.ownedApps(ctx)
			answered = answered && ok
			sum += k
		}
		r.maxExcess = max(r.maxExcess, sum-r.n)
		seen, err := r.watch.snapshot()
		if err != nil {
			return false, fmt.Errorf("the Applications' watch ended: %w", err)
		}
		if len(seen) != r.n {
			last = fmt.Sprintf("%d of %d apps seen", len(seen), r.n)
			return false, nil
		}
		// The replicas hash "namespace/name" over the live members with
		// the ring's defaults: every app must be owned by the member the
		// ring gives it.
		keys := make([]string, 0, len(seen))
		for name := range seen {
			keys = append(keys, r.ns+"/"+name)
		}
		want := shard.Assign(keys, r.liveIDs(), shard.DefaultRingOptions())
		mustOwn := must == nil
		for name, a := range seen {
			if a.owner != want[r.ns+"/"+name] || a.sync != "Synced" || a.health != "Healthy" {
				last = fmt.Sprintf("%s: owner %q (the ring's: %q), %s/%s", name, a.owner, want[r.ns+"/"+name], a.sync, a.health)
				return false, nil
			}
			mustOwn = mustOwn || a.owner == must.id
		}
		if !mustOwn {
			last = must.id + " owns no app"
			return false, nil
		}
		if !answered || sum != r.n {
			last = fmt.Sprintf("the replicas' gitops_shard_apps add up to %d (answered: %v)", sum, answered)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		logs := ""
		for _, p := range r.live {
			logs += fmt.Sprintf("\n--- %s:\n%s", p.id, p.tail(10))
		}
		return fmt.Errorf("%s: not converged within %s (last: %s): %w%s", what, r.h.cfg.FleetTimeout, last, err, logs)
	}
	return nil
}

// phaseResult is what one change of the replicas cost.
type phaseResult struct {
	took     time.Duration
	moved    []string // apps whose owner changed
	writes   float64  // Application writes per moved app
	flapping int      // apps whose owner changed more than once
	noops    int      // writes of any app that changed nothing
	live     int
}

// phase runs change (a replica killed, stopped or added), waits until the
// apps converge again, and measures it.
func (r *operatorRun) phase(ctx context.Context, what string, change func() error) (phaseResult, error) {
	r.watch.reset()
	before := len(r.all)
	start := time.Now()
	if err := change(); err != nil {
		return phaseResult{}, err
	}
	var must *operatorProc
	if len(r.all) > before {
		must = r.all[len(r.all)-1]
	}
	if err := r.converge(ctx, what, must); err != nil {
		return phaseResult{}, err
	}
	res := phaseResult{took: time.Since(start), live: len(r.live)}
	seen, _ := r.watch.snapshot()
	for name, a := range seen {
		if len(a.owners) > 1 {
			res.moved = append(res.moved, name)
		}
		if len(a.owners) > 2 {
			res.flapping++
		}
	}
	sort.Strings(res.moved)
	res.writes, res.noops = writesOf(seen, res.moved), noopsOf(seen, nil)
	r.h.logf("operators: %s: all %d apps owned by %v, Synced and Healthy in %s; %d moved, %.2f writes per moved app (%d of them only the interval's reconciledAt), %d changed owner more than once, %d writes that changed nothing; %s; writes by what they changed: %s",
		what, r.n, r.liveIDs(), res.took.Round(time.Millisecond), len(res.moved), res.writes, periodicOf(seen, res.moved), res.flapping, res.noops, r.shares(seen), r.watch.writeKinds())
	return res, nil
}

// rows are a phase's figures.
func (p phaseResult) rows(name, what string) []Row {
	return []Row{
		{Section: "operators", Measure: fmt.Sprintf("%s: %s, time to all owned by the ring's choice among the %d live replicas, Synced and Healthy", name, what, p.live), Ours: p.took.Seconds(), Unit: Seconds},
		{Section: "operators", Measure: fmt.Sprintf("%s: %s, apps that changed owner", name, what), Ours: float64(len(p.moved)), Unit: Count},
		{Section: "operators", Measure: fmt.Sprintf("%s: %s, Application writes per app that changed owner", name, what), Ours: p.writes, Unit: Writes, Target: "1 (the owner annotation)"},
		{Section: "operators", Measure: fmt.Sprintf("%s: %s, apps that changed owner more than once", name, what), Ours: float64(p.flapping), Unit: Count, Target: "0"},
		{Section: "operators", Measure: fmt.Sprintf("%s: %s, Application writes that changed nothing (any app)", name, what), Ours: float64(p.noops), Unit: Count, Target: "0"},
	}
}

// shares describes how many apps each owner has.
func (r *operatorRun) shares(seen map[string]appSeen) string {
	count := map[string]int{}
	for _, a := range seen {
		count[a.owner]++
	}
	var parts []string
	for owner, k := range count {
		parts = append(parts, fmt.Sprintf("%s: %d", owner, k))
	}
	sort.Strings(parts)
	return "apps per owner " + strings.Join(parts, ", ")
}
