package engine

import (
	"context"
	"errors"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/render"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/sync"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

func newEngine(t *testing.T, tweak func(*Options)) *Engine {
	t.Helper()
	opts := DefaultOptions()
	opts.Clusters = []ClusterConfig{{Name: "in-cluster", Server: "https://kubernetes.default.svc", Config: cluster.Config()}}
	opts.Sync.WaveTimeout = time.Minute
	if tweak != nil {
		tweak(&opts)
	}
	e, err := newWithBuiltins(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// editConfigMap sets data[key] of a live ConfigMap by hand, as a person
// with kubectl edit would.
func editConfigMap(t *testing.T, ns, name, key, value string) {
	t.Helper()
	ctx := context.Background()
	cs, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data[key] = value
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// repoDir writes files into a folder that serves as an app's source.
func repoDir(t *testing.T, files map[string]string) string { return testfiles.Tree(t, files) }

func dirApp(name, dir, ns string) *Application {
	a := &Application{Spec: ApplicationSpec{
		Source:      &ApplicationSource{RepoURL: dir, Path: "app"},
		Destination: ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns},
	}}
	a.Name = name
	return a
}

const webApp = testfiles.WebApp

// refreshUntil refreshes until cond holds (the cache follows the cluster
// by watch, so a refresh right after a sync may still see the old state).
func refreshUntil(t *testing.T, e *Engine, app *Application, what string, cond func(appstatus.Status) bool) appstatus.Status {
	t.Helper()
	var last appstatus.Status
	var lastErr error
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		last, lastErr = e.Refresh(ctx, app)
		return lastErr == nil && cond(last), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: last status %+v, err %v", what, last, lastErr)
	}
	return last
}

func TestRefreshSyncAndHealth(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{"app/web.yaml": webApp, "app/README.md": "not a manifest"})
	var notes []appstatus.NotificationType
	e := newEngine(t, func(o *Options) { o.Notify = func(n appstatus.Notification) { notes = append(notes, n.Type) } })
	app := dirApp(ns, dir, ns) // app names are unique per run: old runs' objects may linger
	st, err := e.Refresh(context.Background(), app)
	if err != nil {
		t.Fatal(err)
	}
	if st.Sync != appstatus.OutOfSync || st.Health.Code != health.Missing || len(st.Resources) != 2 || st.Revision == "" {
		t.Fatalf("before sync: %+v", st)
	}
	res, err := e.Sync(context.Background(), app, SyncRequest{})
	if err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v %s", err, res.Summary())
	}
	st = refreshUntil(t, e, app, "Synced and Healthy", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced && s.Health.Code == health.Healthy })
	if h, _ := e.History(context.Background(), v1alpha1.KeyOf(app)); len(h) != 1 || h[0].Revisions[0] != st.Revision {
		t.Fatalf("history %+v", h)
	}
	if strings.Join([]string{string(notes[0]), string(notes[1])}, ",") != "SyncStarted,SyncSucceeded" {
		t.Fatalf("notifications %v", notes)
	}
	// Drift shows as OutOfSync with a diff.
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	cm, _ := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "settings", metav1.GetOptions{})
	cm.Data["greeting"] = "changed by hand"
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	st = refreshUntil(t, e, app, "drift seen", func(s appstatus.Status) bool { return s.Sync == appstatus.OutOfSync })
	for _, r := range st.Resources {
		if r.Key.Name == "settings" && !strings.Contains(r.Diff, "changed by hand") {
			t.Fatalf("diff of the drifted object: %q", r.Diff)
		}
	}
}

func TestRefreshAndSyncRefuseProjectViolations(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{"app/bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sneaky, namespace: kube-system}\n"})
	proj := Project{Spec: ProjectSpec{SourceRepos: []string{"*"}, Destinations: []ApplicationDestination{{Server: "*", Namespace: ns}}}}
	proj.Name = "team-a"
	e := newEngine(t, func(o *Options) { o.Projects = []Project{proj} })
	app := dirApp(ns, dir, ns)
	app.Spec.Project = "team-a"
	st, err := e.Refresh(context.Background(), app)
	if !errors.Is(err, ErrPolicy) || st.Sync != appstatus.Unknown {
		t.Fatalf("refresh: %v %+v", err, st)
	}
	found := false
	for _, c := range st.Conditions {
		found = found || (c.Type == appstatus.ConditionInvalidSpec && strings.Contains(c.Message, "namespace kube-system is not permitted in project 'team-a'"))
	}
	if !found {
		t.Fatalf("no condition with Argo CD's message naming the namespace: %+v", st.Conditions)
	}
	res, err := e.Sync(context.Background(), app, SyncRequest{})
	if !errors.Is(err, ErrPolicy) || res.Phase != sync.Failed {
		t.Fatalf("sync: %v %s", err, res.Phase)
	}
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	if _, err := cs.CoreV1().ConfigMaps("kube-system").Get(context.Background(), "sneaky", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatal("the refused object was written")
	}
	// An app whose repository the project does not list is refused too.
	proj.Spec.SourceRepos = []string{"https://git.example.com/*"}
	e2 := newEngine(t, func(o *Options) { o.Projects = []Project{proj} })
	if _, err := e2.Refresh(context.Background(), app); err == nil || !strings.Contains(err.Error(), "application repo "+app.Spec.Source.RepoURL+" is not permitted in project 'team-a'") {
		t.Fatalf("foreign repository: %v", err)
	}
}

func TestSyncWindowBlocksAutomatedButNotManualSync(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"})
	proj := Project{Spec: ProjectSpec{SourceRepos: []string{"*"}, Destinations: []ApplicationDestination{{Server: "*", Namespace: "*"}},
		SyncWindows: []SyncWindow{{Kind: "deny", Schedule: "* * * * *", Duration: "1h", Applications: []string{"*"}, ManualSync: true}}}}
	proj.Name = "frozen"
	e := newEngine(t, func(o *Options) { o.Projects = []Project{proj} })
	app := dirApp(ns, dir, ns)
	app.Spec.Project = "frozen"
	_, err := e.Sync(context.Background(), app, SyncRequest{})
	var we *SyncWindowError
	if !errors.As(err, &we) || we.Window.Kind != "deny" || !strings.Contains(err.Error(), "deny window") {
		t.Fatalf("automated sync in a deny window: %v", err)
	}
	res, err := e.Sync(context.Background(), app, SyncRequest{Manual: true})
	if err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("manual sync with manualSync: %v", err)
	}
}

func TestRollbackRefusedWithAutomatedSync(t *testing.T) {
	e := newEngine(t, nil)
	app := dirApp("auto", "/nowhere", "x")
	app.Spec.SyncPolicy = &SyncPolicy{Automated: &SyncPolicyAutomated{}}
	if _, err := e.Rollback(context.Background(), app, 1, false); err == nil || !strings.Contains(err.Error(), "automated") {
		t.Fatalf("rollback with automation: %v", err)
	}
	app.Spec.SyncPolicy = nil
	if _, err := e.Rollback(context.Background(), app, 7, false); err == nil || !strings.Contains(err.Error(), "no history entry 7") {
		t.Fatalf("rollback to a missing entry: %v", err)
	}
}

func TestRenderReturnsDesiredObjects(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	e := newEngine(t, nil)
	objs, rev, err := e.Render(context.Background(), dirApp(ns, repoDir(t, map[string]string{"app/web.yaml": webApp}), ns))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || !strings.HasPrefix(rev, "sha256:") {
		t.Fatalf("rendered %d objects at %q", len(objs), rev)
	}
}

func TestOrphanedResourcesWarning(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	for _, name := range []string{"stray", "ignored-one"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	warn := true
	proj := Project{Spec: ProjectSpec{SourceRepos: []string{"*"}, Destinations: []ApplicationDestination{{Server: "*", Namespace: "*"}},
		OrphanedResources: &OrphanedResourcesMonitorSettings{Warn: &warn, Ignore: []OrphanedResourceKey{{Kind: "ConfigMap", Name: "ignored-*"}}}}}
	proj.Name = "watchful"
	e := newEngine(t, func(o *Options) { o.Projects = []Project{proj} })
	app := dirApp(ns, repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mine}\n"}), ns)
	app.Spec.Project = "watchful"
	if res, err := e.Sync(context.Background(), app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v", err)
	}
	st := refreshUntil(t, e, app, "the orphan reported", func(s appstatus.Status) bool {
		for _, c := range s.Conditions {
			if c.Type == appstatus.ConditionOrphanedResources {
				return true
			}
		}
		return false
	})
	for _, c := range st.Conditions {
		if c.Type == appstatus.ConditionOrphanedResources {
			if !strings.Contains(c.Message, "1 orphaned resource(s)") || !strings.Contains(c.Message, "ConfigMap "+ns+"/stray") {
				t.Fatalf("orphan condition %q", c.Message)
			}
		}
	}
}

// The apply strategy can be chosen per operation.
func TestSyncRequestChoosesTheApplyStrategy(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	e := newEngine(t, nil)
	app := dirApp(ns, repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: v}\n"}), ns)
	res, err := e.Sync(context.Background(), app, SyncRequest{SyncOptions: []string{"ServerSideApply=false"}})
	if err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v", err)
	}
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "c", metav1.GetOptions{})
	if err != nil || cm.Annotations["kubectl.kubernetes.io/last-applied-configuration"] == "" {
		t.Fatalf("client-side apply left no last-applied annotation: %v", err)
	}
	if _, err := e.Sync(context.Background(), app, SyncRequest{SyncOptions: []string{"=bad"}}); err == nil {
		t.Fatal("a malformed sync option was accepted")
	}
}

// An offline destination renders without any connection: nothing listens
// at its server URL, and Refresh says so with a typed error. Its render
// gives namespaced built-in objects the destination namespace, as a render
// for a connected cluster does, and leaves cluster-scoped ones and custom
// resources it cannot place as rendered.
func TestOfflineDestinationRendersWithoutACluster(t *testing.T) {
	t.Parallel()
	const more = "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader}\n" +
		"---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"
	dir := repoDir(t, map[string]string{"app/web.yaml": webApp + more})
	opts := DefaultOptions()
	opts.Clusters = []ClusterConfig{{Name: "prod", Server: "https://prod.invalid", KubeVersion: "1.31.0"}}
	e, err := newWithBuiltins(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	app := dirApp("offline", dir, "shop")
	app.Spec.Destination = ApplicationDestination{Name: "prod", Namespace: "shop"}
	objs, rev, err := e.Render(context.Background(), app)
	if err != nil || len(objs) != 4 || rev == "" {
		t.Fatalf("offline render: %d objects, revision %q, %v", len(objs), rev, err)
	}
	want := map[string]string{"ConfigMap": "shop", "Deployment": "shop", "ClusterRole": "", "Widget": ""}
	for _, o := range objs {
		if o.GetNamespace() != want[o.GetKind()] {
			t.Errorf("offline render: %s %s in namespace %q, want %q", o.GetKind(), o.GetName(), o.GetNamespace(), want[o.GetKind()])
		}
	}
	_, err = e.Refresh(context.Background(), app)
	var unavailable *ClusterUnavailableError
	if !errors.As(err, &unavailable) || unavailable.Cluster != "prod" {
		t.Fatalf("refresh of an offline destination: %v", err)
	}
}

func TestNewRefusesARendererForAnUnknownTool(t *testing.T) {
	opts := DefaultOptions()
	opts.Clusters = []ClusterConfig{{Name: "offline"}}
	opts.Renderers = map[render.Kind]render.Renderer{"cue": render.Tools{}}
	if _, err := newWithBuiltins(opts); err == nil || !strings.Contains(err.Error(), `"cue"`) {
		t.Fatalf("New with a renderer for an unknown tool: %v", err)
	}
}
