package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// startRun runs the engine on apps until the test ends.
func startRun(t *testing.T, e *Engine, apps ...*Application) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	vals := make([]Application, len(apps))
	for i, a := range apps {
		vals[i] = *a
	}
	go func() { defer close(done); _ = e.Run(ctx, vals) }()
	t.Cleanup(func() { cancel(); <-done })
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func automated(a *Application) *Application {
	a.Spec.SyncPolicy = &SyncPolicy{Automated: &SyncPolicyAutomated{Prune: true, SelfHeal: true}}
	return a
}

type noteLog struct {
	mu    gosync.Mutex
	notes []appstatus.Notification
}

func (l *noteLog) add(n appstatus.Notification) {
	l.mu.Lock()
	l.notes = append(l.notes, n)
	l.mu.Unlock()
}
func (l *noteLog) count(typ appstatus.NotificationType, app string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, x := range l.notes {
		if x.Type == typ && x.Key.Name == app {
			n++
		}
	}
	return n
}
func (l *noteLog) has(typ appstatus.NotificationType, app string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range l.notes {
		if n.Type == typ && n.Key.Name == app {
			return true
		}
	}
	return false
}

func TestRunSyncsHealsPrunesAndFollowsChanges(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{"app/web.yaml": webApp, "app/extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n"})
	notes := &noteLog{}
	e := newEngine(t, func(o *Options) { o.Interval = time.Hour; o.Notify = notes.add })
	app := automated(dirApp(ns, dir, ns))
	startRun(t, e, app)
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	ctx := context.Background()

	eventually(t, time.Minute, "Synced and Healthy", func() bool {
		st, ok := e.Apps().AppStatus(v1alpha1.KeyOf(app))
		return ok && st.Sync == appstatus.Synced && st.Health.Code == health.Healthy
	})
	// The sync runs beside the refreshes: its operation may still be
	// ending (reading the cache once more) when a refresh already says
	// Synced and Healthy.
	eventually(t, time.Minute, "sync and health notifications", func() bool {
		return notes.has(appstatus.NotifySyncSucceeded, app.Name) && notes.has(appstatus.NotifyHealthChanged, app.Name)
	})

	// Drift is healed (the cluster event queues the app).
	cm, _ := cs.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	cm.Data["greeting"] = "drifted"
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "drift healed", func() bool {
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
		return err == nil && cm.Data["greeting"] == "hello"
	})

	// A deleted file is pruned, and a new one applied, once the repository
	// hints at a change (the interval is an hour).
	if err := os.Remove(filepath.Join(dir, "app/extra.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "app/new.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fresh}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Apps().Hint(dir)
	eventually(t, time.Minute, "extra pruned and fresh applied", func() bool {
		_, gone := cs.CoreV1().ConfigMaps(ns).Get(ctx, "extra", metav1.GetOptions{})
		_, here := cs.CoreV1().ConfigMaps(ns).Get(ctx, "fresh", metav1.GetOptions{})
		return apierrors.IsNotFound(gone) && here == nil
	})
}

func TestRunPollsOnTheInterval(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{"app/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"})
	e := newEngine(t, func(o *Options) { o.Interval = 500 * time.Millisecond })
	app := automated(dirApp(ns, dir, ns))
	startRun(t, e, app)
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	eventually(t, time.Minute, "first sync", func() bool {
		_, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "a", metav1.GetOptions{})
		return err == nil
	})
	if err := os.WriteFile(filepath.Join(dir, "app/b.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the change seen by polling", func() bool {
		_, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "b", metav1.GetOptions{})
		return err == nil
	})
}

func TestRunAppOfApps(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{
		"child/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-child}\n",
		"app/child.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: ` + ns + `-child}
spec:
  source: {repoURL: DIR, path: child}
  destination: {server: https://kubernetes.default.svc, namespace: ` + ns + `}
  syncPolicy: {automated: {prune: true}}
`,
	})
	child := filepath.Join(dir, "app/child.yaml")
	data, _ := os.ReadFile(child)
	if err := os.WriteFile(child, []byte(strings.ReplaceAll(string(data), "DIR", dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, func(o *Options) { o.Interval = time.Hour })
	parent := automated(dirApp(ns, dir, ns))
	startRun(t, e, parent)
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	eventually(t, time.Minute, "the child app synced", func() bool {
		_, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "from-child", metav1.GetOptions{})
		return err == nil
	})
	found := false
	for _, n := range e.Apps().ManagedApps() {
		found = found || n.Name == ns+"-child"
	}
	if !found {
		t.Fatalf("child not managed: %v", e.Apps().ManagedApps())
	}
	if st, _ := e.Apps().AppStatus(v1alpha1.KeyOf(parent)); st.Sync != appstatus.Synced {
		t.Fatalf("parent status %+v", st)
	}
}

// A sync that fails is retried by policy; a fix committed meanwhile
// pre-empts the retries and is synced.
func TestRunRetriesAndIsPreemptedByAFix(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	failingHook := `apiVersion: batch/v1
kind: Job
metadata: {name: migrate, annotations: {argocd.argoproj.io/hook: PreSync, argocd.argoproj.io/hook-delete-policy: BeforeHookCreation}}
spec:
  backoffLimit: 0
  activeDeadlineSeconds: 1
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {nowhere: "true"}
      containers: [{name: c, image: busybox}]
`
	dir := repoDir(t, map[string]string{"app/hook.yaml": failingHook, "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: payload}\n"})
	notes := &noteLog{}
	e := newEngine(t, func(o *Options) { o.Interval = time.Hour; o.Notify = notes.add })
	app := automated(dirApp(ns, dir, ns))
	// So many retries that only pre-emption can end them within the test's
	// deadline.
	factor := int64(1)
	app.Spec.SyncPolicy.Retry = &RetryStrategy{Limit: 1000, Backoff: &Backoff{Duration: "1s", Factor: &factor, MaxDuration: "1s"}}
	startRun(t, e, app)
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	eventually(t, 2*time.Minute, "the PreSync hook to fail", func() bool {
		j, err := cs.BatchV1().Jobs(ns).Get(context.Background(), "migrate", metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, c := range j.Status.Conditions {
			if c.Type == "Failed" && c.Status == "True" {
				return true
			}
		}
		return false
	})
	// The fix: the hook goes. The next retry sees the newer revision,
	// gives up the old one, and the loop syncs the fix.
	if err := os.Remove(filepath.Join(dir, "app/hook.yaml")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "the fix synced", func() bool {
		_, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "payload", metav1.GetOptions{})
		return err == nil && notes.has(appstatus.NotifySyncSucceeded, app.Name)
	})
	if !notes.has(appstatus.NotifySyncFailed, app.Name) {
		t.Fatal("the pre-empted sync was not reported as failed")
	}
}

// A refresh that fails (the source does not exist yet) is retried with
// backoff, not after a whole interval.
func TestRunRetriesAFailedRefreshWithBackoff(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	dir := filepath.Join(t.TempDir(), "later")
	e := newEngine(t, func(o *Options) { o.Interval = time.Hour })
	app := automated(dirApp(ns, dir, ns))
	startRun(t, e, app)
	eventually(t, time.Minute, "the failure recorded", func() bool {
		st, ok := e.Apps().AppStatus(v1alpha1.KeyOf(app))
		return ok && st.Sync == appstatus.Unknown && hasError(st.Conditions)
	})
	if err := os.MkdirAll(filepath.Join(dir, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "app/cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: late}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the app synced once its source exists", func() bool {
		st, ok := e.Apps().AppStatus(v1alpha1.KeyOf(app))
		return ok && st.Sync == appstatus.Synced
	})
}

// An automated sync in an open deny window waits, and the status names the
// window; nothing is written.
func TestRunAutomatedSyncWaitsForTheWindow(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: held}\n"})
	proj := Project{Spec: ProjectSpec{SourceRepos: []string{"*"}, Destinations: []ApplicationDestination{{Server: "*", Namespace: "*"}},
		SyncWindows: []SyncWindow{{Kind: "deny", Schedule: "* * * * *", Duration: "1h", Namespaces: []string{ns}}}}}
	proj.Name = "frozen"
	e := newEngine(t, func(o *Options) { o.Projects = []Project{proj}; o.Interval = time.Hour })
	app := automated(dirApp(ns, dir, ns))
	app.Spec.Project = "frozen"
	startRun(t, e, app)
	eventually(t, time.Minute, "the blocking window reported", func() bool {
		st, ok := e.Apps().AppStatus(v1alpha1.KeyOf(app))
		if !ok {
			return false
		}
		for _, c := range st.Conditions {
			if c.Type == appstatus.ConditionSyncWindowBlocked && strings.Contains(c.Message, "deny window") {
				return st.Sync == appstatus.OutOfSync
			}
		}
		return false
	})
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "held", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatal("an automated sync ran in a deny window")
	}
}
