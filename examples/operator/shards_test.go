package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/examples/operator/controller"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/shard"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// runningOperator is an operator run in the background by a test.
type runningOperator struct {
	log  *syncBuffer
	stop func()
	done chan error
}

// startReplica runs the operator of namespace ns with args (after the
// test's common ones) until stop is called or the test ends.
func startReplica(t *testing.T, ns string, args ...string) *runningOperator {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	op := &runningOperator{log: &syncBuffer{}, done: make(chan error, 1)}
	all := append([]string{"-kubeconfig", cluster.Kubeconfig(), "-namespace", ns, "-interval", "1m",
		"-metrics-bind-address", "0", "-health-probe-bind-address", "0", "-applicationsets=false",
		"-notifications=false", "-image-update-interval", "0"}, args...)
	go func() { op.done <- runWith(ctx, all, op.log) }()
	var once gosync.Once
	op.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-op.done; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("operator %v: %v", args, err)
			}
		})
	}
	t.Cleanup(func() {
		op.stop()
		if t.Failed() {
			t.Logf("log of operator %v:\n%s", args, op.log)
		}
	})
	return op
}

// shardRepo writes n app folders (app0 ... app<n-1>), each a ConfigMap
// cm<i>.
func shardRepo(t *testing.T, n int) string {
	t.Helper()
	repo := t.TempDir()
	for i := range n {
		dir := filepath.Join(repo, fmt.Sprintf("app%d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cm := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm%d}\ndata: {a: b}\n", i)
		if err := os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte(cm), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return repo
}

// shardApp is app i of the repo, named prefix<i>: apps of different
// tests have different names, since an app's objects are tracked by its
// bare name in the one cluster the tests share.
func shardApp(ns, dest, repo, prefix string, i int) *v1alpha1.Application {
	return &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s%d", prefix, i)}, Spec: v1alpha1.ApplicationSpec{
		Project:     "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: "file://" + repo, Path: fmt.Sprintf("app%d", i)},
		Destination: v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: dest},
		SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{SelfHeal: true}},
	}}
}

// createApps creates the apps once the CRD an operator installs is served.
func createApps(ctx context.Context, t *testing.T, c client.Client, apps ...*v1alpha1.Application) {
	t.Helper()
	for _, app := range apps {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			return c.Create(ctx, app.DeepCopy()) == nil, nil
		})
		if err != nil {
			t.Fatalf("create Application %s: %v", app.Name, err)
		}
	}
}

// waitApps polls the Applications of ns until ok holds for every one.
func waitApps(ctx context.Context, t *testing.T, c client.Client, ns string, n int, what string, ok func(*v1alpha1.Application) bool) {
	t.Helper()
	var list v1alpha1.ApplicationList
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil || len(list.Items) != n {
			return false, nil
		}
		for i := range list.Items {
			if !ok(&list.Items[i]) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		var got []string
		for _, a := range list.Items {
			got = append(got, fmt.Sprintf("%s owner=%q %s/%s %v", a.Name, a.Annotations[controller.AnnotationOwner], a.Status.Sync.Status, a.Status.Health.Status, a.Status.Conditions))
		}
		t.Fatalf("Applications not %s: %v; %v", what, err, got)
	}
}

func healthyApp(a *v1alpha1.Application) bool {
	return a.Status.Sync.Status == "Synced" && a.Status.Health.Status == "Healthy"
}

// refreshAll asks for a refresh of every app of ns and waits until each
// was done (the operator removes the annotation after the refresh).
func refreshAll(ctx context.Context, t *testing.T, c client.Client, ns string, n int) {
	t.Helper()
	var list v1alpha1.ApplicationList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:"normal"}}}`, controller.AnnotationRefresh))
		if err := c.Patch(ctx, &list.Items[i], client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatal(err)
		}
	}
	waitApps(ctx, t, c, ns, n, "refreshed", func(a *v1alpha1.Application) bool {
		_, pending := a.Annotations[controller.AnnotationRefresh]
		return !pending
	})
}

// appRecorder records, from a watch, each app's owner annotations and
// sync/health pairs, in the order they were seen (consecutive repeats
// once), and the writes of its status that changed more than
// reconciledAt.
type appRecorder struct {
	mu     gosync.Mutex
	owners map[string][]string
	states map[string][]string
	// last is each app's status seen last; statusWrites counts, since
	// the reset, the versions whose status differed from the one before
	// in more than reconciledAt.
	last         map[string]v1alpha1.ApplicationStatus
	statusWrites map[string]int
}

func recordApps(ctx context.Context, t *testing.T, c client.WithWatch, ns string) *appRecorder {
	t.Helper()
	w, err := c.Watch(ctx, &v1alpha1.ApplicationList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	rec := &appRecorder{last: map[string]v1alpha1.ApplicationStatus{}}
	rec.reset()
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			if ev.Type != watch.Added && ev.Type != watch.Modified {
				continue
			}
			a, ok := ev.Object.(*v1alpha1.Application)
			if !ok {
				continue
			}
			rec.mu.Lock()
			st := a.Status
			st.ReconciledAt = nil
			if prev, ok := rec.last[a.Name]; ok && !resource.ObjectsEqual(&prev, &st) {
				rec.statusWrites[a.Name]++
			}
			rec.last[a.Name] = st
			rec.owners[a.Name] = appendNew(rec.owners[a.Name], a.Annotations[controller.AnnotationOwner])
			rec.states[a.Name] = appendNew(rec.states[a.Name], string(a.Status.Sync.Status)+"/"+string(a.Status.Health.Status))
			rec.mu.Unlock()
		}
	}()
	return rec
}

// reset forgets what was seen: from now on, only changes are recorded
// after the first value seen of each app.
func (r *appRecorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.owners, r.states = map[string][]string{}, map[string][]string{}
	r.statusWrites = map[string]int{}
}

// statusWritten is how many times app's status changed in more than
// reconciledAt since the reset.
func (r *appRecorder) statusWritten(app string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.statusWrites[app]
}

func (r *appRecorder) seen() (owners, states map[string][]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	owners, states = map[string][]string{}, map[string][]string{}
	for k, v := range r.owners {
		owners[k] = append([]string(nil), v...)
	}
	for k, v := range r.states {
		states[k] = append([]string(nil), v...)
	}
	return owners, states
}

func appendNew(s []string, v string) []string {
	if len(s) > 0 && s[len(s)-1] == v {
		return s
	}
	return append(s, v)
}

// TestShardedOperatorsShareApps runs two operators with -shard on one
// namespace: every app is reconciled by exactly one of them (the owner
// annotation never flips while both run, through a refresh of every
// app), both have a share, the Leases are named after the members; when
// one stops the other takes its apps, logging their names, without any
// change of their status (issue 46 item 4: a takeover writes the owner
// annotation and nothing else), and heals their drift.
func TestShardedOperatorsShareApps(t *testing.T) {
	const n = 8
	ns, dest := cluster.TestNamespace(t), cluster.TestNamespace(t)
	repo := shardRepo(t, n)
	ctx := t.Context()
	c := testClient(t)

	a := startReplica(t, ns, "-shard", "-id", "op-a")
	for i := range n {
		createApps(ctx, t, c, shardApp(ns, dest, repo, "shared", i))
	}
	b := startReplica(t, ns, "-shard", "-id", "op-b", "-install-crd=false")
	rec := recordApps(ctx, t, c, ns)
	var ownedByB []string
	waitApps(ctx, t, c, ns, n, "shared by op-a and op-b, Synced and Healthy", func(app *v1alpha1.Application) bool {
		return healthyApp(app) && (app.Annotations[controller.AnnotationOwner] == "op-a" || app.Annotations[controller.AnnotationOwner] == "op-b")
	})
	// Both members are seen and both have their share.
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var list v1alpha1.ApplicationList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, nil
		}
		ownedByB = nil
		count := map[string]int{}
		for _, app := range list.Items {
			owner := app.Annotations[controller.AnnotationOwner]
			count[owner]++
			if owner == "op-b" {
				ownedByB = append(ownedByB, app.Name)
			}
		}
		return count["op-a"] > 0 && count["op-b"] > 0 && count["op-a"]+count["op-b"] == n, nil
	})
	if err != nil {
		t.Fatalf("apps not shared by both operators: %v\nop-a:\n%s\nop-b:\n%s", err, a.log, b.log)
	}
	waitApps(ctx, t, c, ns, n, "Synced and Healthy", healthyApp)
	for _, id := range []string{"op-a", "op-b"} {
		var lease coordinationv1.Lease
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "gitops-operator-" + id}, &lease); err != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != id {
			t.Errorf("Lease gitops-operator-%s: %v %+v", id, err, lease.Spec)
		}
	}

	// A member gone for good (its Lease unrenewed for 5 minutes) is
	// removed by the member holding gitops-operator, and named.
	at := metav1.NewMicroTime(time.Now().Add(-5 * time.Minute))
	ghost := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "gitops-operator-ghost", Namespace: ns, Labels: map[string]string{shard.LabelGroup: "gitops-operator"}},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("ghost"), LeaseDurationSeconds: ptr.To[int32](15), AcquireTime: &at, RenewTime: &at},
	}
	if err := c.Create(ctx, ghost); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(ghost), &coordinationv1.Lease{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("the expired member's Lease was not deleted: %v", err)
	}
	if logs := a.log.String() + b.log.String(); !strings.Contains(logs, "expired members removed") || !strings.Contains(logs, "ghost") {
		t.Errorf("no log line names the expired member ghost")
	}

	// Steady: a refresh of every app changes no owner.
	rec.reset()
	refreshAll(ctx, t, c, ns, n)
	owners, _ := rec.seen()
	for app, seq := range owners {
		if len(seq) != 1 {
			t.Errorf("app %s changed owner while both operators ran: %v", app, seq)
		}
	}

	// op-b stops: op-a takes its apps, names them, and nothing else of
	// them changes.
	rec.reset()
	b.stop()
	waitApps(ctx, t, c, ns, n, "owned by op-a", func(app *v1alpha1.Application) bool {
		return app.Annotations[controller.AnnotationOwner] == "op-a"
	})
	refreshAll(ctx, t, c, ns, n)
	owners, states := rec.seen()
	for _, app := range ownedByB {
		// The watch saw the change to op-a (and op-b only if it had not
		// been seen since reset), never a change back.
		if got := owners[app]; len(got) == 0 || len(got) > 2 || got[len(got)-1] != "op-a" || (len(got) == 2 && got[0] != "op-b") {
			t.Errorf("app %s owners after op-b stopped: %v, want [op-b op-a] or [op-a]", app, got)
		}
		if got := states[app]; len(got) != 1 || got[0] != "Synced/Healthy" {
			t.Errorf("app %s sync/health moved during the takeover: %v", app, got)
		}
		if k := rec.statusWritten(app); k != 0 {
			t.Errorf("app %s: the takeover wrote its status %d times, want none (only the owner annotation)", app, k)
		}
	}
	gained := ""
	for _, line := range strings.Split(a.log.String(), "\n") {
		if strings.Contains(line, "apps gained by sharding") {
			gained += line
		}
	}
	for _, app := range ownedByB {
		if !strings.Contains(gained, ns+"/"+app) {
			t.Errorf("op-a's gain lines do not name %s/%s: %s", ns, app, gained)
		}
	}

	// op-a heals a moved app's drift.
	moved := strings.TrimPrefix(ownedByB[0], "shared")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: dest, Name: "cm" + moved}}
	if err := c.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
		return err == nil, nil
	})
	if err != nil {
		t.Errorf("op-a did not heal ConfigMap %s of moved app %s: %v", cm.Name, ownedByB[0], err)
	}
}

// TestSecondOperatorDoesNotAct starts a second operator on a namespace
// another already serves, first without -shard (as a Deployment scaled to
// 2 would), then with -shard: neither acts while the first holds the
// namespace, both say so in their log and a Warning Event on the control
// Lease, and the unsharded one takes over once the first stops.
func TestSecondOperatorDoesNotAct(t *testing.T) {
	ns, dest := cluster.TestNamespace(t), cluster.TestNamespace(t)
	repo := shardRepo(t, 2)
	ctx := t.Context()
	c := testClient(t)

	a := startReplica(t, ns, "-id", "op-a")
	createApps(ctx, t, c, shardApp(ns, dest, repo, "single", 0))
	waitApps(ctx, t, c, ns, 1, "Synced and Healthy", healthyApp)

	b := startReplica(t, ns, "-id", "op-b", "-install-crd=false")
	waitNotActing(ctx, t, c, ns, "op-b", "op-a")
	s := startReplica(t, ns, "-id", "op-s", "-shard", "-install-crd=false")
	waitNotActing(ctx, t, c, ns, "op-s", "op-a")
	for name, op := range map[string]*runningOperator{"op-b": b, "op-s": s} {
		if log := op.log.String(); !strings.Contains(log, "does not act: operator op-a holds namespace "+ns) {
			t.Errorf("%s's log does not say it does not act:\n%s", name, log)
		}
	}
	if log := b.log.String(); strings.Contains(log, `"Starting Controller" controller="application"`) {
		t.Errorf("op-b started its Application controller while op-a holds the namespace:\n%s", log)
	}
	if log := s.log.String(); strings.Contains(log, "apps gained by sharding") {
		t.Errorf("op-s took apps while op-a holds the namespace:\n%s", log)
	}
	var app v1alpha1.Application
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "single0"}, &app); err != nil || app.Annotations[controller.AnnotationOwner] != "" {
		t.Errorf("single0 has an owner annotation, or cannot be read: %v %v", app.Annotations, err)
	}
	s.stop()

	// op-a stops: op-b takes the namespace and serves a new app.
	a.stop()
	createApps(ctx, t, c, shardApp(ns, dest, repo, "single", 1))
	waitApps(ctx, t, c, ns, 2, "Synced and Healthy", healthyApp)
	var lease coordinationv1.Lease
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: LeaseName}, &lease); err != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != "op-b" {
		t.Errorf("control Lease after op-a stopped: %v %+v", err, lease.Spec)
	}
}

// waitNotActing waits for the NotActing Event of operator who, naming
// holder.
func waitNotActing(ctx context.Context, t *testing.T, c client.Client, ns, who, holder string) {
	t.Helper()
	var list corev1.EventList
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, nil
		}
		for _, ev := range list.Items {
			if ev.Reason == ReasonNotActing && ev.InvolvedObject.Kind == "Lease" && ev.InvolvedObject.Name == LeaseName &&
				strings.Contains(ev.Message, "operator "+who+" does not act: operator "+holder+" holds") {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("no %s Event of %s naming %s: %v; events %v", ReasonNotActing, who, holder, err, list.Items)
	}
}
