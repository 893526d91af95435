package engine

import (
	"context"
	"fmt"
	"strings"
	gosync "sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/state"
	"github.com/kubegitops/gitops/sync"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// crashStore is a real state.ConfigMapStore that a test can kill: once
// kill returns true for a state being saved, that save goes through and
// every later one fails, as if the process had died right after it (the
// only fault a real store cannot produce on demand).
type crashStore struct {
	*state.ConfigMapStore
	mu    gosync.Mutex
	dead  bool
	saves int
	kill  func(state.AppState) bool
}

func (s *crashStore) Save(ctx context.Context, app string, st state.AppState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return fmt.Errorf("state of %s: the process is dead", app)
	}
	if err := s.ConfigMapStore.Save(ctx, app, st); err != nil {
		return err
	}
	s.saves++
	if s.kill != nil && s.kill(st) {
		s.dead = true
	}
	return nil
}

// manyConfigMaps is n ConfigMaps spread over waves, and a PostSync hook Job.
func manyConfigMaps(n, waves int) fstest.MapFS {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%03d, annotations: {argocd.argoproj.io/sync-wave: \"%d\"}}\ndata: {i: \"%d\"}\n", i, i*waves/n, i)
	}
	return fstest.MapFS{
		"app/configmaps.yaml": {Data: []byte(b.String())},
		"app/hook.yaml": {Data: []byte(`apiVersion: batch/v1
kind: Job
metadata: {name: after, annotations: {argocd.argoproj.io/hook: PostSync}}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
`)},
	}
}

// succeededTasks counts the finished tasks of a checkpoint.
func succeededTasks(st state.AppState) int {
	n := 0
	if st.Operation != nil && st.Operation.Checkpoint != nil {
		for _, t := range st.Operation.Checkpoint.Tasks {
			if t.Status == sync.TaskSucceeded {
				n++
			}
		}
	}
	return n
}

// hookCreateSent reports a checkpoint taken before the hook's create.
func hookCreateSent(st state.AppState) bool {
	if st.Operation == nil || st.Operation.Checkpoint == nil {
		return false
	}
	for id, t := range st.Operation.Checkpoint.Tasks {
		if strings.HasPrefix(id, "batch/Job") && t.Name != "" && t.UID == "" {
			return true
		}
	}
	return false
}

// runUntilKilled runs an engine on the store until the store is killed,
// then stops it as a crash would (its last saves never happen) and waits
// for Run to return.
func runUntilKilled(t *testing.T, store *crashStore, app *Application, whenDead func(cancel func())) {
	t.Helper()
	e := newEngine(t, func(o *Options) { o.State = store; o.Interval = time.Hour })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kill := store.kill
	store.kill = func(st state.AppState) bool {
		if !kill(st) {
			return false
		}
		go whenDead(cancel)
		return true
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = e.Run(ctx, []Application{*app}) }()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("the engine was never killed")
	}
	e.Close()
}

// TestRunResumesAnOperationAfterACrash: an automated sync of 300
// ConfigMaps in 10 waves and a PostSync hook, from a real Git server, is
// killed twice: after wave 4's checkpoint, and once the hook's create was
// checkpointed and sent. A third engine on the same ConfigMap store
// finishes it: the hook is the one the second engine created (adopted, not
// run again), wave 0 was not written again, history has one entry, and
// the next refresh says Synced.
func TestRunResumesAnOperationAfterACrash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gs, commit := testfiles.GitRepo(t, gitserver.DefaultOptions(), "many", manyConfigMaps(300, 10))
	ns := cluster.TestNamespace(t)
	kube, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	app := gitApp(ns, gs.RepoURL("many"), gs.Branch(), ns)

	// First engine: killed at the checkpoint after wave 4 (150 objects).
	first := &crashStore{ConfigMapStore: state.NewConfigMapStore(kube, ns), kill: func(st state.AppState) bool { return succeededTasks(st) >= 150 }}
	runUntilKilled(t, first, app, func(cancel func()) { cancel() })
	wave0, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "cm-000", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "cm-299", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("wave 9 was written before the kill: %v", err)
	}
	st, _ := first.Load(ctx, ns)
	if !st.Operation.Resumable() || st.Operation.Request.Revisions[0] != commit {
		t.Fatalf("the store holds no resumable operation at %s: %+v", commit, st.Operation)
	}

	// Second engine: resumes, and is killed once the hook's create was
	// checkpointed and the Job exists.
	var hookUID types.UID
	second := &crashStore{ConfigMapStore: state.NewConfigMapStore(kube, ns), kill: hookCreateSent}
	runUntilKilled(t, second, app, func(cancel func()) {
		defer cancel()
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			if j, err := kube.BatchV1().Jobs(ns).Get(ctx, "after", metav1.GetOptions{}); err == nil {
				hookUID = j.UID
				return
			}
			select {
			case <-time.After(20 * time.Millisecond):
			case <-ctx.Done():
				return
			}
		}
	})
	if hookUID == "" {
		t.Fatal("the second engine never created the hook")
	}

	// Third engine: completes the operation.
	third := &crashStore{ConfigMapStore: state.NewConfigMapStore(kube, ns)}
	e := newEngine(t, func(o *Options) { o.State = third; o.Interval = time.Hour })
	startRun(t, e, app)
	eventually(t, 3*time.Minute, "the resumed operation Succeeded", func() bool {
		op, err := e.LastOperation(ctx, v1alpha1.AppKey{Name: ns})
		return err == nil && op != nil && op.Phase == sync.Succeeded
	})
	job, err := kube.BatchV1().Jobs(ns).Get(ctx, "after", metav1.GetOptions{})
	if err != nil || job.UID != hookUID {
		t.Fatalf("the PostSync hook ran again: uid %v, want %s (%v)", job.UID, hookUID, err)
	}
	again, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "cm-000", metav1.GetOptions{})
	if err != nil || again.ResourceVersion != wave0.ResourceVersion {
		t.Fatalf("wave 0 was written again: resourceVersion %s, was %s (%v)", again.ResourceVersion, wave0.ResourceVersion, err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "cm-299", metav1.GetOptions{}); err != nil {
		t.Fatalf("wave 9 missing after the resume: %v", err)
	}
	h, err := e.History(ctx, v1alpha1.AppKey{Name: ns})
	if err != nil || len(h) != 1 || h[0].Revisions[0] != commit {
		t.Fatalf("history after the resume: %+v %v", h, err)
	}
	op, _ := e.LastOperation(ctx, v1alpha1.AppKey{Name: ns})
	if op.Checkpoint != nil || op.Request != nil {
		t.Fatal("a finished operation kept its checkpoint")
	}
	eventually(t, time.Minute, "Synced after the resume", func() bool {
		s, ok := e.Apps().AppStatus(v1alpha1.AppKey{Name: ns})
		return ok && s.Sync == appstatus.Synced && s.Revision == commit
	})
	if h, _ := e.History(ctx, v1alpha1.AppKey{Name: ns}); len(h) != 1 {
		t.Fatalf("another sync after the resume: %+v", h)
	}
}

// TestRollbackTargetsSurviveARestart: three deployments with
// revisionHistoryLimit 2 keep the last two in the ConfigMap store; a new
// engine (a restarted process) rolls back to the older of them, and the
// cluster holds that revision's content.
func TestRollbackTargetsSurviveARestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gs := testfiles.GitServer(t, gitserver.DefaultOptions())
	cm := func(v string) []byte {
		return []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: \"" + v + "\"}\n")
	}
	var commits []string
	c, err := gs.CreateRepository(ctx, "rb", fstest.MapFS{"app/cm.yaml": {Data: cm("1")}})
	if err != nil {
		t.Fatal(err)
	}
	commits = append(commits, c)
	ns := cluster.TestNamespace(t)
	kube, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	app := gitApp(ns, gs.RepoURL("rb"), gs.Branch(), ns)
	app.Spec.SyncPolicy = nil // a rollback needs manual sync
	limit := int64(2)
	app.Spec.RevisionHistoryLimit = &limit

	e := newEngine(t, func(o *Options) { o.State = state.NewConfigMapStore(kube, ns) })
	for i := 1; i <= 3; i++ {
		if i > 1 {
			c, err := gs.Commit(ctx, "rb", "v"+fmt.Sprint(i), map[string][]byte{"app/cm.yaml": cm(fmt.Sprint(i))})
			if err != nil {
				t.Fatal(err)
			}
			commits = append(commits, c)
			e.Apps().Invalidate(app.Spec.Source.RepoURL)
		}
		if res, err := e.Sync(ctx, app, SyncRequest{Manual: true}); err != nil || res.Phase != sync.Succeeded {
			t.Fatalf("sync %d: %s %v", i, res.Phase, err)
		}
	}
	e.Close()

	restarted := newEngine(t, func(o *Options) { o.State = state.NewConfigMapStore(kube, ns) })
	h, err := restarted.History(ctx, v1alpha1.AppKey{Name: ns})
	if err != nil || len(h) != 2 || h[0].ID != 2 || h[1].ID != 3 || h[0].Revisions[0] != commits[1] {
		t.Fatalf("history after the restart: %+v %v", h, err)
	}
	if res, err := restarted.Rollback(ctx, app, 2, false); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("rollback: %s %v", res.Phase, err)
	}
	live, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	if err != nil || live.Data["v"] != "2" {
		t.Fatalf("after the rollback: %v %v", live.Data, err)
	}
	h, _ = restarted.History(ctx, v1alpha1.AppKey{Name: ns})
	if len(h) != 2 || h[1].ID != 4 || h[1].Revisions[0] != commits[1] {
		t.Fatalf("history after the rollback: %+v", h)
	}
	if _, err := restarted.Rollback(ctx, app, 1, false); err == nil || !strings.Contains(err.Error(), "no history entry 1") {
		t.Fatalf("rollback past the limit: %v", err)
	}
}

// TestRunKnowsAppsByNamespaceAndName: two Applications named web, in two
// namespaces (apps in any namespace), from one repository on a real Git
// server, are both synced and known apart by their keys; removing one
// leaves the other reconciled, and the removed app's objects stay.
func TestRunKnowsAppsByNamespaceAndName(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gs, _ := testfiles.GitRepo(t, gitserver.DefaultOptions(), "twins", fstest.MapFS{"app/cm.yaml": {Data: []byte(
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n")}})
	kube, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	proj := Project{Spec: ProjectSpec{SourceRepos: []string{"*"}, SourceNamespaces: []string{"team-*"},
		Destinations: []ApplicationDestination{{Server: "*", Namespace: "*"}}}}
	proj.Name = "default"
	e := newEngine(t, func(o *Options) { o.Projects = []Project{proj}; o.Interval = time.Hour })
	destA, destB := cluster.TestNamespace(t), cluster.TestNamespace(t)
	a := gitApp("web", gs.RepoURL("twins"), gs.Branch(), destA)
	a.Namespace = "team-a"
	b := gitApp("web", gs.RepoURL("twins"), gs.Branch(), destB)
	b.Namespace = "team-b"
	if e.instanceOf(a) != "team-a_web" || e.instanceOf(b) != "team-b_web" ||
		e.instanceName(v1alpha1.AppKey{Namespace: "argocd", Name: "web"}) != "web" || e.instanceName(v1alpha1.AppKey{Name: "web"}) != "web" {
		t.Fatalf("names: %s %s", e.instanceOf(a), e.instanceOf(b))
	}
	startRun(t, e, a, b)
	for _, key := range []v1alpha1.AppKey{v1alpha1.KeyOf(a), v1alpha1.KeyOf(b)} {
		eventually(t, 2*time.Minute, key.String()+" Synced", func() bool {
			s, ok := e.Apps().AppStatus(key)
			return ok && s.Sync == appstatus.Synced && len(s.Resources) == 2
		})
	}
	if _, ok := e.Apps().AppStatus(v1alpha1.AppKey{Name: "web"}); ok {
		t.Fatal("a status under the bare name")
	}
	live, err := kube.CoreV1().ConfigMaps(destA).Get(ctx, "cm", metav1.GetOptions{})
	if err != nil || !strings.HasPrefix(live.Annotations[resource.AnnotationTrackingID], "team-a_web:") {
		t.Fatalf("team-a's object is not tracked by its key: %v %v", live.GetAnnotations(), err)
	}

	if err := e.Apps().Remove(v1alpha1.AppKey{Namespace: "team-a", Name: "web"}); err != nil {
		t.Fatal(err)
	}
	if apps := e.Apps().ManagedApps(); len(apps) != 1 || apps[0] != v1alpha1.KeyOf(b) {
		t.Fatalf("managed after removing team-a/web: %v", apps)
	}
	for _, ns := range []string{destA, destB} {
		if err := kube.CoreV1().ConfigMaps(ns).Delete(ctx, "cm", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, time.Minute, "team-b/web healed", func() bool {
		_, err := kube.CoreV1().ConfigMaps(destB).Get(ctx, "cm", metav1.GetOptions{})
		return err == nil
	})
	if _, err := kube.CoreV1().ConfigMaps(destA).Get(ctx, "cm", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the removed app was healed: %v", err)
	}
	if _, err := kube.CoreV1().ConfigMaps(destA).Get(ctx, "extra", metav1.GetOptions{}); err != nil {
		t.Fatalf("the removed app's objects were deleted: %v", err)
	}
	eventually(t, time.Minute, "team-b/web Synced after the heal", func() bool {
		s, ok := e.Apps().AppStatus(v1alpha1.KeyOf(b))
		return ok && s.Sync == appstatus.Synced
	})
	if _, ok := e.Apps().AppStatus(v1alpha1.KeyOf(a)); ok {
		t.Fatal("the removed app still has a status")
	}
}

// TestCheckpointWritesPerSync counts the state store writes of one sync of
// 300 ConfigMaps in 10 waves with a PostSync hook: the Running record, one
// checkpoint after the dry run, one after each wave but the last group
// (the hook's), one before the hook's create, and the final record.
func TestCheckpointWritesPerSync(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	kube, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	files := manyConfigMaps(300, 10)
	tree := map[string]string{}
	for name, f := range files {
		tree[name] = string(f.Data)
	}
	store := &crashStore{ConfigMapStore: state.NewConfigMapStore(kube, ns)}
	e := newEngine(t, func(o *Options) { o.State = store })
	app := dirApp(ns, repoDir(t, tree), ns)
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %s %v", res.Phase, err)
	}
	// The Running record, the dry run, each of the 10 waves (the hook's
	// PostSync group is the last, with no checkpoint after it), the hook's
	// create, and the final record.
	if want := 1 + 1 + 10 + 1 + 1; store.saves != want {
		t.Fatalf("%d state writes for one sync, want %d", store.saves, want)
	}
	t.Logf("%d state writes for a sync of 300 objects in 10 waves and a PostSync hook", store.saves)
}
