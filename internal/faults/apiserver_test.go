package faults

import (
	"context"
	"fmt"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/sync"
)

var (
	gvrConfigMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	gvrDeployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	gvrJobs        = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	gvrSecrets     = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

const (
	bulkConfigMaps  = 496
	bulkDeployments = 4
)

// hookJob is a Job hook of phase; without a delete policy it gets
// BeforeHookCreation, so it stays after the sync and its UID can be
// compared with the one seen before the fault.
func hookJob(name, phase string) string {
	return fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata: {name: %s, annotations: {argocd.argoproj.io/hook: %s}}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
`, name, phase)
}

// bulkManifests is a 500-object app (ConfigMaps and Deployments) with a
// PreSync and a PostSync hook.
func bulkManifests() string {
	var b strings.Builder
	b.WriteString(hookJob("pre-migrate", "PreSync") + "---\n")
	b.WriteString(hookJob("post-notify", "PostSync") + "---\n")
	for i := range bulkConfigMaps {
		fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%03d}\ndata: {index: %q, payload: %q}\n---\n", i, fmt.Sprint(i), fmt.Sprintf("value-%d", i))
	}
	for i := range bulkDeployments {
		fmt.Fprintf(&b, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web-%d}
spec:
  replicas: 1
  selector: {matchLabels: {app: web-%d}}
  template:
    metadata: {labels: {app: web-%d}}
    spec: {containers: [{name: web, image: nginx}]}
---
`, i, i, i)
	}
	return b.String()
}

// The API server is killed in the middle of a 500-object sync, right after
// the 100th ConfigMap was applied, while other applies are in flight, and
// is started again. The documented way to survive this is the same Sync
// call: every step retries transient errors (connection refused, EOF,
// 429 while the watch cache initialises) with backoff, and every write is
// re-entrant. After the restart the call finishes: all 500 objects exist
// with their desired content, the app refreshes Synced and Healthy, and
// each hook was created exactly once (the PreSync Job keeps the UID it had
// before the kill; the PostSync Job is seen created once by a watch
// started after the restart).
func TestAPIServerKilledDuringSync(t *testing.T) {
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{"app/bulk.yaml": bulkManifests()})
	dyn := dynamicClient(t)

	var (
		once      gosync.Once
		killed    = make(chan struct{})
		restarted = make(chan error, 1)
		preUID    types.UID
		preErr    error
		// failed counts writes that got no answer or a server error: the
		// proof that the fault hit the sync's own requests.
		failed atomic.Int64
		// appliedAtKill counts the ConfigMap applies answered before the
		// kill.
		appliedAtKill int
	)
	w := &writes{}
	w.after = func(method, path string, code int) {
		if code == 0 || code >= 500 || code == 429 {
			failed.Add(1)
			return
		}
		if method != "PATCH" || !strings.HasPrefix(path, "configmaps/") {
			return
		}
		if w.total("PATCH configmaps/") < 100 {
			return
		}
		once.Do(func() {
			appliedAtKill = w.total("PATCH configmaps/")
			// Read the PreSync hook as it is before the fault, then kill:
			// this request's goroutine blocks here, the other workers'
			// applies are in flight.
			job, err := dyn.Resource(gvrJobs).Namespace(ns).Get(context.Background(), "pre-migrate", metav1.GetOptions{})
			if err != nil {
				preErr = err
			} else {
				preUID = job.GetUID()
			}
			if err := cluster.StopAPIServer(); err != nil {
				restarted <- err
				close(killed)
				return
			}
			close(killed)
			go func() { restarted <- cluster.StartAPIServer(context.Background()) }()
		})
	}
	start := time.Now()
	e := newEngine(t, w.wrap(cluster.Config()), func(o *gitops.Options) {
		o.Sync.OnProgress = func(p sync.Progress) {
			t.Logf("%s: %s wave %d done", time.Since(start).Round(time.Millisecond), p.Phase, p.Wave)
		}
	})
	app := newApp(ns, dir, ns)

	type outcome struct {
		res sync.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := e.Sync(context.Background(), app, gitops.SyncRequest{})
		done <- outcome{res, err}
	}()

	select {
	case <-killed:
	case out := <-done:
		t.Fatalf("the sync ended before the API server was killed: %s %v", out.res.Phase, out.err)
	case <-time.After(3 * time.Minute):
		t.Fatal("the sync never applied 100 ConfigMaps")
	}
	if preErr != nil {
		t.Fatalf("PreSync hook before the kill: %v", preErr)
	}
	// Watch the PostSync hook from right after the restart: it cannot
	// have been created while the API server was down, and the list
	// below catches one created before the watch starts.
	if err := <-restarted; err != nil {
		t.Fatalf("restart: %v", err)
	}
	t.Logf("API server killed and restarted %s into the sync", time.Since(start).Round(time.Millisecond))
	postCreations := countCreations(t, dyn, ns, "post-notify")

	var out outcome
	select {
	case out = <-done:
	case <-time.After(4 * time.Minute):
		t.Fatal("the sync did not finish within 4 minutes of the restart")
	}
	t.Logf("sync finished %s after it started; %d ConfigMap applies before the kill, %d writes failed by the fault",
		time.Since(start).Round(time.Millisecond), appliedAtKill, failed.Load())
	if appliedAtKill >= bulkConfigMaps {
		t.Fatalf("every ConfigMap was applied before the kill (%d): the fault did not hit the middle of the sync", appliedAtKill)
	}
	if failed.Load() == 0 {
		t.Fatal("no write of the sync failed: the fault did not hit the sync's requests")
	}
	if out.err != nil || out.res.Phase != sync.Succeeded {
		t.Fatalf("sync after the restart: phase %s, err %v\n%s", out.res.Phase, out.err, out.res.Summary())
	}

	// Every object, with its desired content.
	cms, err := dyn.Resource(gvrConfigMaps).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]any{}
	for _, cm := range cms.Items {
		data, _, _ := unstructured.NestedMap(cm.Object, "data")
		got[cm.GetName()] = data
	}
	for i := range bulkConfigMaps {
		name := fmt.Sprintf("cm-%03d", i)
		data, ok := got[name]
		if !ok {
			t.Errorf("ConfigMap %s missing after the sync", name)
			continue
		}
		if data["index"] != fmt.Sprint(i) || data["payload"] != fmt.Sprintf("value-%d", i) {
			t.Errorf("ConfigMap %s holds %v", name, data)
		}
	}
	for i := range bulkDeployments {
		d, err := dyn.Resource(gvrDeployments).Namespace(ns).Get(context.Background(), fmt.Sprintf("web-%d", i), metav1.GetOptions{})
		if err != nil {
			t.Errorf("Deployment web-%d: %v", i, err)
			continue
		}
		if img, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers"); len(img) != 1 {
			t.Errorf("Deployment web-%d containers %v", i, img)
		}
	}

	// Each hook ran exactly once.
	pre, err := dyn.Resource(gvrJobs).Namespace(ns).Get(context.Background(), "pre-migrate", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("PreSync hook after the sync: %v", err)
	}
	if pre.GetUID() != preUID {
		t.Errorf("PreSync hook re-created: UID %s before the kill, %s after", preUID, pre.GetUID())
	}
	if n := postCreations(); n != 1 {
		t.Errorf("PostSync hook created %d times, want 1", n)
	}
	for id, ts := range out.res.State.Tasks {
		if strings.Contains(id, "Job "+ns+"/pre-migrate") && ts.UID != preUID {
			t.Errorf("state of %s records UID %s, the hook's is %s", id, ts.UID, preUID)
		}
	}

	// The app refreshes Synced and Healthy (the engine's cache has caught
	// up with the restart by then).
	var st appstatus.Status
	waitFor(t, 2*time.Minute, "the app Synced and Healthy after the restart", func() bool {
		var err error
		st, err = e.Refresh(context.Background(), app)
		return err == nil && st.Sync == appstatus.Synced && st.Health.Code == health.Healthy
	})
	if n := len(st.Resources); n < bulkConfigMaps+bulkDeployments {
		t.Errorf("status has %d resource rows, want at least %d", n, bulkConfigMaps+bulkDeployments)
	}
}

// countCreations lists the Jobs of ns and then watches them from the
// list's resourceVersion, counting every creation of a Job called name
// (one already listed counts as one). It returns a function that stops the
// watch and returns the count. The watch must not break: a creation missed
// while it was down could not be counted, so that fails the test.
func countCreations(t *testing.T, dyn dynamic.Interface, ns, name string) func() int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	list, err := dyn.Resource(gvrJobs).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	n := 0
	for _, j := range list.Items {
		if j.GetName() == name {
			n++
		}
	}
	wi, err := dyn.Resource(gvrJobs).Namespace(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var mu gosync.Mutex
	broken := ""
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range wi.ResultChan() {
			switch ev.Type {
			case watch.Added:
				if u, ok := ev.Object.(*unstructured.Unstructured); ok && u.GetName() == name {
					mu.Lock()
					n++
					mu.Unlock()
				}
			case watch.Error:
				if ctx.Err() != nil {
					return // stopped by the caller
				}
				mu.Lock()
				broken = fmt.Sprint(apierrors.FromObject(ev.Object))
				mu.Unlock()
				return
			}
		}
		if ctx.Err() == nil {
			mu.Lock()
			broken = "the watch ended early"
			mu.Unlock()
		}
	}()
	return func() int {
		cancel()
		wi.Stop()
		<-done
		mu.Lock()
		defer mu.Unlock()
		if broken != "" {
			t.Fatalf("counting creations of %s: %s", name, broken)
		}
		return n
	}
}
