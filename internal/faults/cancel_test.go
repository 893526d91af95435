package faults

import (
	"context"
	"errors"
	"fmt"
	"strings"
	gosync "sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/sync"
)

const wavedCMs = 12

// wavedManifests is an app in three waves of ConfigMaps (wave 1 also has a
// Deployment) between a PreSync and a PostSync hook.
func wavedManifests() string {
	var b strings.Builder
	b.WriteString(hookJob("pre-migrate", "PreSync") + "---\n")
	b.WriteString(hookJob("post-notify", "PostSync") + "---\n")
	for wave := range 3 {
		for i := range wavedCMs {
			fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: w%d-%02d, annotations: {argocd.argoproj.io/sync-wave: %q}}\ndata: {v: %q}\n---\n",
				wave, i, fmt.Sprint(wave), fmt.Sprint(i))
		}
	}
	b.WriteString(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, annotations: {argocd.argoproj.io/sync-wave: "1"}}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`)
	return b.String()
}

// The host's context ends in the middle of wave 1 of an engine sync, while
// wave 1's applies are in flight. The sync returns at once with a Running
// result and an error that wraps context.Canceled; its State, serialised as
// a host would store it, resumes the operation through Engine.Sync
// (SyncRequest.State): the sync succeeds, the waves and hooks the State
// records as done are not written again (no PATCH to a wave-0 ConfigMap,
// no POST of the PreSync Job during the resume), and the PreSync hook keeps
// its UID.
//
// sync/resume_test.go's TestInterruptedSyncResumesWithoutRerunningHooks
// interrupts a Syncer between two waves (from OnProgress); this one cuts
// in the middle of a wave, from the engine.
func TestContextCancelledMidSyncResumes(t *testing.T) {
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{"app/waves.yaml": wavedManifests()})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once gosync.Once
	w := &writes{}
	w.after = func(method, path string, code int) {
		if method == "PATCH" && strings.HasPrefix(path, "configmaps/w1-") && code > 0 && code < 300 && w.total("PATCH configmaps/w1-") >= 3 {
			once.Do(cancel)
		}
	}
	e := newEngine(t, w.wrap(cluster.Config()), nil)
	app := newApp(ns, dir, ns)

	res, err := e.Sync(ctx, app, gitops.SyncRequest{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted sync: err %v, want one that wraps context.Canceled; phase %s %s\n%+v", err, res.Phase, res.Message, res.Results)
	}
	if res.Phase != sync.Running {
		t.Fatalf("interrupted sync: phase %s, want Running (resumable)\n%s", res.Phase, res.Summary())
	}
	state := res.State
	preUID := state.Tasks[taskID(t, state, "pre-migrate")].UID
	if preUID == "" {
		t.Fatalf("the state records no UID for the PreSync hook: %+v", state.Tasks)
	}
	for i := range wavedCMs {
		id := taskID(t, state, fmt.Sprintf("w0-%02d", i))
		if st := state.Tasks[id].Status; st != sync.TaskSucceeded {
			t.Fatalf("wave 0 task %s is %s in the state, want Succeeded", id, st)
		}
	}
	for id, ts := range state.Tasks {
		if ts.Status == sync.TaskFailed {
			t.Errorf("task %s Failed after a cancellation (%s): a resume would not retry it", id, ts.Message)
		}
	}
	if _, ok := findTask(state, "w2-00"); ok && state.Tasks[taskID(t, state, "w2-00")].Status != sync.TaskPending {
		t.Fatalf("wave 2 ran after the cancellation: %+v", state.Tasks[taskID(t, state, "w2-00")])
	}
	// Resume with what the host stored.
	w.mu.Lock()
	w.counts, w.after = nil, nil
	w.mu.Unlock()
	stored := roundTrip(t, state)
	res, err = e.Sync(context.Background(), app, gitops.SyncRequest{State: &stored})
	if err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("resumed sync: phase %s, err %v\n%s", res.Phase, err, res.Summary())
	}
	for i := range wavedCMs {
		if n := w.count("PATCH", fmt.Sprintf("configmaps/w0-%02d", i)); n != 0 {
			t.Errorf("wave 0 ConfigMap w0-%02d written %d times by the resume", i, n)
		}
	}
	for id, ts := range state.Tasks {
		if ts.Status != sync.TaskSucceeded || !strings.Contains(id, "ConfigMap") {
			continue
		}
		name := id[strings.LastIndex(id, "/")+1 : strings.Index(id, ":")]
		if n := w.count("PATCH", "configmaps/"+name); n != 0 {
			t.Errorf("ConfigMap %s, done before the cancellation, written %d times by the resume", name, n)
		}
	}
	if n := w.count("POST", "jobs"); n != 1 {
		t.Errorf("the resume created %d Jobs, want 1 (the PostSync hook only)", n)
	}
	for i := range wavedCMs {
		if n := w.count("PATCH", fmt.Sprintf("configmaps/w2-%02d", i)); n != 1 {
			t.Errorf("wave 2 ConfigMap w2-%02d written %d times by the resume, want 1", i, n)
		}
	}
	dyn := dynamicClient(t)
	pre, err := dyn.Resource(gvrJobs).Namespace(ns).Get(context.Background(), "pre-migrate", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pre.GetUID() != preUID {
		t.Errorf("PreSync hook re-created by the resume: UID %s, was %s", pre.GetUID(), preUID)
	}
	waitFor(t, time.Minute, "the app Synced and Healthy", func() bool {
		st, err := e.Refresh(context.Background(), app)
		return err == nil && st.Sync == appstatus.Synced && st.Health.Code == health.Healthy
	})
}

// findTask returns the id of the state's task whose object is called name.
func findTask(st sync.State, name string) (string, bool) {
	for id := range st.Tasks {
		if strings.Contains(id, "/"+name+":") {
			return id, true
		}
	}
	return "", false
}

func taskID(t *testing.T, st sync.State, name string) string {
	t.Helper()
	id, ok := findTask(st, name)
	if !ok {
		ids := make([]string, 0, len(st.Tasks))
		for id := range st.Tasks {
			ids = append(ids, id)
		}
		t.Fatalf("no task for %s in the state: %v", name, ids)
	}
	return id
}

// The API server creates the PostSync hook but its answer is lost (the
// connection resets), and the host's context ends while the sync backs off
// to retry: the hook exists, but the sync cannot know. The resumed sync must adopt that hook, not
// delete it as "a previous run" and create it again (which would run it
// twice).
func TestContextCancelledDuringHookCreation(t *testing.T) {
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{"app/waves.yaml": wavedManifests()})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &writes{}
	w.lose = func(method, path string, code int) bool {
		if method == "POST" && path == "jobs" && code == 201 && w.count("POST", "jobs") == 2 {
			cancel() // the second Job created is the PostSync hook
			return true
		}
		return false
	}
	e := newEngine(t, w.wrap(cluster.Config()), nil)
	app := newApp(ns, dir, ns)
	res, err := e.Sync(ctx, app, gitops.SyncRequest{})
	if !errors.Is(err, context.Canceled) || res.Phase != sync.Running {
		t.Fatalf("interrupted sync: phase %s, err %v\n%s", res.Phase, err, res.Summary())
	}
	dyn := dynamicClient(t)
	post, err := dyn.Resource(gvrJobs).Namespace(ns).Get(context.Background(), "post-notify", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the PostSync hook was not created before the cancellation: %v", err)
	}
	creations := countCreations(t, dyn, ns, "post-notify")

	stored := roundTrip(t, res.State)
	res, err = e.Sync(context.Background(), app, gitops.SyncRequest{State: &stored})
	if err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("resumed sync: phase %s, err %v\n%s", res.Phase, err, res.Summary())
	}
	again, err := dyn.Resource(gvrJobs).Namespace(ns).Get(context.Background(), "post-notify", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := creations(); n != 1 || again.GetUID() != post.GetUID() {
		t.Errorf("PostSync hook created again by the resume: %d creation(s) counted, UID %s before, %s after", n, post.GetUID(), again.GetUID())
	}
}
