package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/health/actions"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
)

// syncedApp syncs an app of files into a fresh namespace and waits until it
// is Synced and Healthy.
func syncedApp(t *testing.T, e *Engine, files map[string]string, project string) (*Application, string) {
	t.Helper()
	ns := cluster.TestNamespace(t)
	app := dirApp(ns, repoDir(t, files), ns)
	app.Spec.Project = project
	res, err := e.Sync(context.Background(), app, SyncRequest{})
	if err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v %s", err, res.Summary())
	}
	refreshUntil(t, e, app, "Synced and Healthy", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced && s.Health.Code == health.Healthy })
	return app, ns
}

// poll waits for cond with a deadline.
func poll(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func podNames(t *testing.T, cs kubernetes.Interface, ns string) []string {
	t.Helper()
	pods, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p.Name)
		}
	}
	return out
}

func TestRunActionRestartsAndScalesADeployment(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	var notes []appstatus.Notification
	e := newEngine(t, func(o *Options) {
		o.Registerer = reg
		o.Notify = func(n appstatus.Notification) { notes = append(notes, n) }
	})
	app, ns := syncedApp(t, e, map[string]string{"app/web.yaml": webApp}, "")
	ctx := context.Background()
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	key := resource.Key{Group: "apps", Kind: "Deployment", Namespace: ns, Name: "web"}

	list, err := e.Actions(ctx, app, key)
	if err != nil {
		t.Fatal(err)
	}
	var offered []string
	for _, a := range list {
		offered = append(offered, a.Name+map[bool]string{true: "(disabled)", false: ""}[a.Disabled])
	}
	if strings.Join(offered, " ") != "pause restart resume(disabled) scale" {
		t.Fatalf("offered %v", offered)
	}

	var before []string
	poll(t, "one running pod", func(ctx context.Context) (bool, error) {
		before = podNames(t, cs, ns)
		return len(before) == 1, nil
	})
	res, err := e.RunAction(ctx, app, key, "restart", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 1 || res.Changes[0].Operation != actions.OperationPatch || res.Changes[0].Key != key {
		t.Fatalf("changes %+v", res.Changes)
	}
	// kwok rolls the pods: a new one replaces the old, and it is ready.
	poll(t, "the pod replaced", func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		now := podNames(t, cs, ns)
		return len(now) == 1 && now[0] != before[0] && d.Status.UpdatedReplicas == 1 && d.Status.ReadyReplicas == 1 &&
			d.Status.Replicas == 1 && d.Status.ObservedGeneration == d.Generation, nil
	})
	d, _ := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if d.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] == "" {
		t.Fatal("no restartedAt annotation")
	}
	// The annotation is owned by the action's field manager alone.
	owners := fieldOwners(d.ManagedFields, "kubectl.kubernetes.io/restartedAt")
	if !slices.Equal(owners, []string{"gitops-action-restart"}) {
		t.Fatalf("restartedAt owned by %v", owners)
	}
	// Recorded: a notification, an Event on the object, a metric.
	if len(notes) == 0 || notes[len(notes)-1].Type != appstatus.NotifyResourceActionRan {
		t.Fatalf("notifications %+v", notes)
	}
	evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=" + ActionEventReason})
	if err != nil || len(evs.Items) != 1 || evs.Items[0].InvolvedObject.Name != "web" || !strings.Contains(evs.Items[0].Message, "restart") {
		t.Fatalf("events %v %+v", err, evs)
	}
	if got := testutil.ToFloat64(e.metrics.Actions.WithLabelValues(app.Name, "restart", "ok")); got != 1 {
		t.Fatalf("metric %v", got)
	}

	// Scale to 3: kwok makes three pods ready.
	if _, err := e.RunAction(ctx, app, key, "scale", map[string]string{"replicas": "3"}); err != nil {
		t.Fatal(err)
	}
	poll(t, "three ready replicas", func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		return err == nil && d.Status.ReadyReplicas == 3, err
	})
	// Git still says one replica: the app is OutOfSync until synced again.
	refreshUntil(t, e, app, "OutOfSync after scaling", func(s appstatus.Status) bool { return s.Sync == appstatus.OutOfSync })

	// Bad input: refused, typed, and nothing applied.
	gen := d.Generation
	d, _ = cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	gen = d.Generation
	if _, err := e.RunAction(ctx, app, key, "scale", map[string]string{"replicas": "-1"}); !errors.Is(err, health.ErrLuaRuntime) {
		t.Fatalf("negative replicas: %v", err)
	}
	if _, err := e.RunAction(ctx, app, key, "resume", nil); !errors.Is(err, actions.ErrDisabled) {
		t.Fatalf("resume of a running Deployment: %v", err)
	}
	if d, _ = cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); d.Generation != gen {
		t.Fatalf("a refused action changed the Deployment (generation %d -> %d)", gen, d.Generation)
	}
	if got := testutil.ToFloat64(e.metrics.Actions.WithLabelValues(app.Name, "scale", "error")); got != 1 {
		t.Fatalf("error metric %v", got)
	}
	// An object the app does not track has no actions.
	other := resource.Key{Kind: "ConfigMap", Namespace: "kube-system", Name: "extension-apiserver-authentication"}
	if _, err := e.Actions(ctx, app, other); !errors.Is(err, ErrNotInApp) {
		t.Fatalf("untracked object: %v", err)
	}
}

// fieldOwners returns the managers whose fieldsV1 mention field.
func fieldOwners(mf []metav1.ManagedFieldsEntry, field string) []string {
	var out []string
	for _, m := range mf {
		if m.FieldsV1 != nil && strings.Contains(string(m.FieldsV1.Raw), field) {
			out = append(out, m.Manager)
		}
	}
	return out
}

const cronJob = `apiVersion: batch/v1
kind: CronJob
metadata: {name: report}
spec:
  schedule: "0 0 1 1 *"
  jobTemplate:
    metadata: {labels: {team: data}}
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: report, image: busybox}]
`

func TestRunActionCreatesAJobFromACronJob(t *testing.T) {
	t.Parallel()
	e := newEngine(t, nil)
	app, ns := syncedApp(t, e, map[string]string{"app/cron.yaml": cronJob}, "")
	ctx := context.Background()
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	key := resource.Key{Group: "batch", Kind: "CronJob", Namespace: ns, Name: "report"}
	res, err := e.RunAction(ctx, app, key, "create-job", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 1 || res.Changes[0].Operation != actions.OperationCreate || res.Changes[0].Key.Kind != "Job" {
		t.Fatalf("changes %+v", res.Changes)
	}
	name := res.Changes[0].Key.Name
	var job *batchv1.Job
	poll(t, "the job to complete", func(ctx context.Context) (bool, error) {
		job, err = cs.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range job.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if ref := metav1.GetControllerOf(job); ref == nil || ref.Kind != "CronJob" || ref.Name != "report" ||
		job.Labels["team"] != "data" || job.Annotations["cronjob.kubernetes.io/instantiate"] != "manual" {
		t.Fatalf("job %+v", job.ObjectMeta)
	}
	// The Job is not the app's: the app stays Synced, and a sync with
	// prune leaves it alone.
	refreshUntil(t, e, app, "still Synced", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced })
	if r, err := e.Sync(ctx, app, SyncRequest{Prune: true}); err != nil || r.Phase != sync.Succeeded {
		t.Fatalf("sync: %v %s", err, r.Summary())
	}
	if _, err := cs.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
		t.Fatalf("the sync removed the action's job: %v", err)
	}
	// suspend then resume toggle the schedule.
	if _, err := e.RunAction(ctx, app, key, "suspend", nil); err != nil {
		t.Fatal(err)
	}
	cj, _ := cs.BatchV1().CronJobs(ns).Get(ctx, "report", metav1.GetOptions{})
	if cj.Spec.Suspend == nil || !*cj.Spec.Suspend {
		t.Fatal("not suspended")
	}
	if _, err := e.RunAction(ctx, app, key, "suspend", nil); !errors.Is(err, actions.ErrDisabled) {
		t.Fatalf("second suspend: %v", err)
	}
}

func TestRunActionRefusesWhatTheProjectForbids(t *testing.T) {
	t.Parallel()
	proj := Project{Spec: ProjectSpec{SourceRepos: []string{"*"}, Destinations: []ApplicationDestination{{Server: "*", Namespace: "*"}},
		NamespaceResourceWhitelist: []metav1.GroupKind{{Group: "batch", Kind: "CronJob"}}}}
	proj.Name = "cron-only"
	e := newEngine(t, func(o *Options) { o.Projects = []Project{proj} })
	app, ns := syncedApp(t, e, map[string]string{"app/cron.yaml": cronJob}, "cron-only")
	ctx := context.Background()
	key := resource.Key{Group: "batch", Kind: "CronJob", Namespace: ns, Name: "report"}
	_, err := e.RunAction(ctx, app, key, "create-job", nil)
	var pe *PolicyError
	if !errors.As(err, &pe) || pe.Rule != "namespaceResourceWhitelist" || !strings.Contains(err.Error(), "create-job") {
		t.Fatalf("want a PolicyError naming the rule and action, got %v", err)
	}
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	jobs, err := cs.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(jobs.Items) != 0 {
		t.Fatalf("a refused action created %d jobs (%v)", len(jobs.Items), err)
	}
	// Patching the allowed CronJob itself is fine.
	if _, err := e.RunAction(ctx, app, key, "suspend", nil); err != nil {
		t.Fatal(err)
	}
}
