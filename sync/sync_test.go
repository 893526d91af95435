package sync

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/hooks"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const jobOK = `apiVersion: batch/v1
kind: Job
metadata:
  name: NAME
  annotations: ANNOTATIONS
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
`

// jobFailing fails within seconds: its Pod can never be scheduled and its
// deadline is one second, so the Job controller marks it Failed.
const jobFailing = `apiVersion: batch/v1
kind: Job
metadata:
  name: NAME
  annotations: ANNOTATIONS
spec:
  backoffLimit: 0
  activeDeadlineSeconds: 1
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {nowhere: "true"}
      containers: [{name: c, image: busybox}]
`

func job(tmpl, name, annotations string) string {
	return strings.NewReplacer("NAME", name, "ANNOTATIONS", annotations).Replace(tmpl)
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations: {argocd.argoproj.io/sync-wave: "1"}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
`

func TestWaveWaitsForJobAndConfigMap(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	var atWave0 struct{ deploymentExisted, jobComplete bool }
	s, _ := newSyncer(t, func(o *syncerSetup) {
		o.OnProgress = func(p Progress) {
			if p.Phase == "Sync" && p.Wave == 0 {
				_, atWave0.deploymentExisted = get(t, gvrDeployments, ns, "web")
				j, ok := get(t, gvrJobs, ns, "setup")
				atWave0.jobComplete = ok && conditionTrue(j, "Complete")
			}
		}
	})
	desired := decode(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n---\n"+
		job(jobOK, "setup", "{}")+"---\n"+deployment)
	res, err := s.Sync(context.Background(), Request{App: "shop", Revision: "abc", Desired: desired, Namespace: ns})
	mustSucceed(t, res, err)
	if atWave0.deploymentExisted || !atWave0.jobComplete {
		t.Fatalf("after wave 0: deployment existed=%v, job complete=%v", atWave0.deploymentExisted, atWave0.jobComplete)
	}
	d, _ := get(t, gvrDeployments, ns, "web")
	if !conditionTrue(d, "Available") {
		t.Fatal("sync succeeded before the Deployment was Available")
	}
	if r := row(t, res, "apps/Deployment "+ns+"/web"); r.Action != Created || r.Wave != 1 || r.Status != TaskSucceeded ||
		r.Health == nil || r.Health.Code != health.Healthy {
		t.Fatalf("deployment row %+v", r)
	}
	if got := d.GetAnnotations()[resource.AnnotationTrackingID]; got != "shop:apps/Deployment:"+ns+"/web" {
		t.Fatalf("tracking id %q", got)
	}
}

func TestPreSyncHookCompletesBeforeSync(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	var cmBeforeSync bool
	s, _ := newSyncer(t, func(o *syncerSetup) {
		o.OnProgress = func(p Progress) {
			if p.Phase == "PreSync" {
				_, cmBeforeSync = get(t, gvrConfigMaps, ns, "app")
			}
		}
	})
	desired := decode(t, ns, job(jobOK, "migrate", "{argocd.argoproj.io/hook: PreSync}")+"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\n")
	res, err := s.Sync(context.Background(), Request{App: "shop", Revision: "abc", Desired: desired, Namespace: ns})
	mustSucceed(t, res, err)
	if cmBeforeSync {
		t.Fatal("the Sync phase ran before the PreSync hook completed")
	}
	j, ok := get(t, gvrJobs, ns, "migrate")
	if !ok || !conditionTrue(j, "Complete") {
		t.Fatal("PreSync Job not complete")
	}
	for _, f := range j.GetFinalizers() {
		if f == hooks.Finalizer {
			t.Fatal("hook finalizer left after completion")
		}
	}
	if r := row(t, res, "batch/Job "+ns+"/migrate"); !r.Hook || r.Phase != hooks.PreSync || r.Status != TaskSucceeded {
		t.Fatalf("hook row %+v", r)
	}
}

func TestFailingPreSyncRunsSyncFailAndAppliesNothingElse(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	s, _ := newSyncer(t, nil)
	desired := decode(t, ns, job(jobFailing, "migrate", "{argocd.argoproj.io/hook: PreSync}")+"---\n"+
		job(jobOK, "cleanup", "{argocd.argoproj.io/hook: SyncFail}")+"---\n"+
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\n")
	res, err := s.Sync(context.Background(), Request{App: "shop", Revision: "abc", Desired: desired, Namespace: ns})
	if res.Phase != Failed || err == nil {
		t.Fatalf("phase %s, err %v", res.Phase, err)
	}
	if !strings.Contains(err.Error(), "batch/Job "+ns+"/migrate") {
		t.Fatalf("error does not name the failed hook: %v", err)
	}
	if _, ok := get(t, gvrConfigMaps, ns, "app"); ok {
		t.Fatal("the Sync phase ran after a failed PreSync hook")
	}
	j, ok := get(t, gvrJobs, ns, "cleanup")
	if !ok || !conditionTrue(j, "Complete") {
		t.Fatal("SyncFail hook did not run to completion")
	}
	if r := row(t, res, "ConfigMap "+ns+"/app"); r.Status != TaskPending {
		t.Fatalf("config map row %+v", r)
	}
}

// Each delete policy against each outcome.
func TestHookDeletePolicies(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, policy string
		fail         bool
		deleted      bool
	}{
		{"succeeded-on-success", "HookSucceeded", false, true},
		{"succeeded-on-failure", "HookSucceeded", true, false},
		{"failed-on-failure", "HookFailed", true, true},
		{"failed-on-success", "HookFailed", false, false},
		{"before-creation-on-success", "BeforeHookCreation", false, false},
		{"before-creation-on-failure", "BeforeHookCreation", true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ns := cluster.TestNamespace(t)
			s, _ := newSyncer(t, nil)
			tmpl := jobOK
			if c.fail {
				tmpl = jobFailing
			}
			desired := decode(t, ns, job(tmpl, "hook", "{argocd.argoproj.io/hook: PostSync, argocd.argoproj.io/hook-delete-policy: "+c.policy+"}")+
				"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\n")
			res, err := s.Sync(context.Background(), Request{App: "shop", Revision: "abc", Desired: desired, Namespace: ns})
			if c.fail != (res.Phase == Failed) {
				t.Fatalf("phase %s, err %v", res.Phase, err)
			}
			obj, exists := get(t, gvrJobs, ns, "hook")
			if exists && obj.GetDeletionTimestamp() != nil {
				exists = false // deleted in the background, Pods first
			}
			if exists == c.deleted {
				t.Fatalf("hook exists=%v, want deleted=%v", exists, c.deleted)
			}
			if c.policy == "BeforeHookCreation" && !c.fail {
				first := obj.GetUID()
				res, err := s.Sync(context.Background(), Request{App: "shop", Revision: "def", Desired: desired, Namespace: ns})
				mustSucceed(t, res, err)
				again, _ := get(t, gvrJobs, ns, "hook")
				if again.GetUID() == first {
					t.Fatal("BeforeHookCreation did not replace the previous hook")
				}
			}
		})
	}
}

func TestCRDAndItsObjectsInOneSync(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	s, _ := newSyncer(t, nil)
	group := strings.ReplaceAll(ns, "-", "") + ".example.com"
	crd := testfiles.WidgetCRD("GROUP") + `---
apiVersion: GROUP/v1
kind: Widget
metadata: {name: w1}
spec: {size: 3}
`
	desired := decode(t, ns, strings.ReplaceAll(crd, "GROUP", group))
	res, err := s.Sync(context.Background(), Request{App: "crd-and-objects", Revision: "abc", Desired: desired, Namespace: ns})
	mustSucceed(t, res, err)
	if r := row(t, res, group+"/Widget "+ns+"/w1"); r.Status != TaskSucceeded || r.Action != Created {
		t.Fatalf("widget row %+v", r)
	}
	cleanupCRD(t, "widgets."+group)
}

func cleanupCRD(t *testing.T, name string) {
	t.Cleanup(func() {
		_ = dyn(t).Resource(gvrCRDs).Delete(context.Background(), name, deleteNow)
	})
}

func TestImmutableFieldRecreatedWithForce(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	s, _ := newSyncer(t, nil)
	first := decode(t, ns, job(jobOK, "once", "{}"))
	res, err := s.Sync(context.Background(), Request{App: "shop", Desired: first, Namespace: ns})
	mustSucceed(t, res, err)
	before, _ := get(t, gvrJobs, ns, "once")

	changed := decode(t, ns, strings.Replace(job(jobOK, "once", "{}"), "image: busybox", "image: alpine", 1))
	res, err = s.Sync(context.Background(), Request{App: "shop", Desired: changed, Namespace: ns})
	var imm *ImmutableFieldError
	if !errors.As(err, &imm) || res.Phase != Failed {
		t.Fatalf("without Force: phase %s, err %v", res.Phase, err)
	}
	if len(imm.Fields) == 0 || !strings.HasPrefix(imm.Fields[0], "spec.template") {
		t.Fatalf("immutable fields %v", imm.Fields)
	}

	forced := decode(t, ns, strings.Replace(job(jobOK, "once", "{argocd.argoproj.io/sync-options: Force=true}"), "image: busybox", "image: alpine", 1))
	res, err = s.Sync(context.Background(), Request{App: "shop", Desired: forced, Namespace: ns})
	mustSucceed(t, res, err)
	after, _ := get(t, gvrJobs, ns, "once")
	if after.GetUID() == before.GetUID() || row(t, res, "batch/Job "+ns+"/once").Action != Recreated {
		t.Fatal("the Job was not re-created")
	}
}

func TestApplyOutOfSyncOnlyWritesNothingInSync(t *testing.T) {
	t.Parallel()
	// An app name of its own: this syncer has no ManagedObjects lookup, so
	// it scans the cluster for the app's objects, and a cluster-scoped
	// object another parallel test synced under a shared name would be
	// counted as this app's (pruned or reported).
	ns := cluster.TestNamespace(t)
	s, counter := newSyncer(t, func(o *syncerSetup) {
		o.InSync = func(_ context.Context, desired, live *unstructured.Unstructured) (bool, error) {
			d, _ := json.Marshal(desired.Object["data"])
			l, _ := json.Marshal(live.Object["data"])
			return string(d) == string(l), nil
		}
	})
	var yaml strings.Builder
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		yaml.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + n + "}\ndata: {k: v}\n---\n")
	}
	desired := decode(t, ns, yaml.String())
	opts, _ := resource.ParseOptions("ApplyOutOfSyncOnly=true")
	res, err := s.Sync(context.Background(), Request{App: "out-of-sync-only", Desired: desired, Namespace: ns, Options: opts})
	mustSucceed(t, res, err)
	written := counter.count()
	if written < 5 {
		t.Fatalf("first sync wrote %d times, want at least 5", written)
	}
	res, err = s.Sync(context.Background(), Request{App: "out-of-sync-only", Desired: desired, Namespace: ns, Options: opts})
	mustSucceed(t, res, err)
	if counter.count() != written {
		t.Fatalf("resync of objects in sync wrote %d times", counter.count()-written)
	}
	for _, r := range res.Results {
		if r.Action != Unchanged {
			t.Fatalf("row %+v", r)
		}
	}
}

func TestWaveThatNeverBecomesHealthyTimesOut(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	s, _ := newSyncer(t, func(o *syncerSetup) { o.WaveTimeout = 3 * time.Second })
	stuck := strings.Replace(deployment, "containers:", "nodeSelector: {nowhere: \"true\"}\n      containers:", 1)
	desired := decode(t, ns, stuck+"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: later, annotations: {argocd.argoproj.io/sync-wave: \"2\"}}\n")
	start := time.Now()
	res, err := s.Sync(context.Background(), Request{App: "shop", Desired: desired, Namespace: ns})
	if res.Phase != Failed || err == nil {
		t.Fatalf("phase %s, err %v", res.Phase, err)
	}
	if time.Since(start) > time.Minute {
		t.Fatalf("the timeout took %v", time.Since(start))
	}
	if !strings.Contains(err.Error(), "timed out after 3s waiting for apps/Deployment "+ns+"/web") {
		t.Fatalf("error does not say what it waited for: %v", err)
	}
	if _, ok := get(t, gvrConfigMaps, ns, "later"); ok {
		t.Fatal("a later wave ran after a timed-out wave")
	}
}

func TestDryRunWritesNothingAndReportsEveryError(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	s, counter := newSyncer(t, nil)
	good := decode(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: good}\n---\n"+deployment)
	res, err := s.Sync(context.Background(), Request{App: "shop", Desired: good, Namespace: ns, DryRun: true})
	mustSucceed(t, res, err)
	if counter.count() != 0 {
		t.Fatalf("a dry run wrote %d times", counter.count())
	}
	if r := row(t, res, "ConfigMap "+ns+"/good"); r.Action != Created {
		t.Fatalf("plan row %+v", r)
	}
	bad := decode(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: good}\n---\n"+
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad_Name}\n---\n"+
		"apiVersion: v1\nkind: Service\nmetadata: {name: svc}\nspec: {ports: [{port: 99999}]}\n")
	res, err = s.Sync(context.Background(), Request{App: "shop", Desired: bad, Namespace: ns})
	if res.Phase != Failed || err == nil {
		t.Fatalf("phase %s", res.Phase)
	}
	for _, want := range []string{"ConfigMap " + ns + "/Bad_Name", "Service " + ns + "/svc", "nothing was written"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q: %v", want, err)
		}
	}
	if counter.count() != 0 {
		t.Fatalf("a failed dry run let %d writes through", counter.count())
	}
}

func TestPlanOrder(t *testing.T) {
	mk := func(kind, name string, phase hooks.Phase, wave int) *task {
		return &task{key: resource.Key{Kind: kind, Name: name, Namespace: "x"}, phase: phase, wave: wave}
	}
	ts := []*task{
		mk("Deployment", "d", hooks.Sync, 0),
		mk("Widget", "w", hooks.Sync, 0),
		mk("ConfigMap", "c", hooks.Sync, 0),
		mk("Job", "pre", hooks.PreSync, 5),
		mk("ConfigMap", "post", hooks.PostSync, -3),
		mk("ConfigMap", "early", hooks.Sync, -1),
	}
	ts[0].key.Group = "apps"
	ts[3].key.Group = "batch"
	sortTasks(ts)
	var got []string
	for _, t := range ts {
		got = append(got, t.key.Name)
	}
	if strings.Join(got, ",") != "pre,early,c,d,w,post" {
		t.Fatalf("order %v", got)
	}
}

// With the real differ, a resync of objects in sync sends no write, and an
// object that lost a field is written again.
func TestResyncWithDifferWritesOnlyWhatDrifted(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	s, counter := newBenchSyncer(t)
	desired := decode(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n---\n"+
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata: {k: v}\n---\n"+deployment)
	res, err := s.Sync(context.Background(), Request{App: "shop", Desired: desired, Namespace: ns})
	mustSucceed(t, res, err)
	before := counter.count()
	res, err = s.Sync(context.Background(), Request{App: "shop", Desired: desired, Namespace: ns})
	mustSucceed(t, res, err)
	if n := counter.count() - before; n != 0 {
		t.Fatalf("resync in sync wrote %d times: %s", n, res.Summary())
	}
	cm, _ := get(t, gvrConfigMaps, ns, "b")
	unstructured.RemoveNestedField(cm.Object, "data")
	if _, err := dyn(t).Resource(gvrConfigMaps).Namespace(ns).Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	before = counter.count()
	res, err = s.Sync(context.Background(), Request{App: "shop", Desired: desired, Namespace: ns})
	mustSucceed(t, res, err)
	if n := counter.count() - before; n != 1 {
		t.Fatalf("healing one drifted object wrote %d times", n)
	}
	if row(t, res, "ConfigMap "+ns+"/b").Action != Configured || row(t, res, "ConfigMap "+ns+"/a").Action != Unchanged {
		t.Fatalf("rows: %+v", res.Results)
	}
}

// An object refused by Admit fails the sync before anything is written; a
// refused prune is skipped.
func TestAdmitRefusesBeforeAnyWrite(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	refuse := func(_ context.Context, obj *unstructured.Unstructured, _ bool, prune bool) error {
		if obj.GetName() == "forbidden" || (prune && obj.GetName() == "old") {
			return errors.New("not allowed here")
		}
		return nil
	}
	s, counter := newSyncer(t, func(o *syncerSetup) { o.Admit = refuse })
	res, err := s.Sync(context.Background(), Request{App: "shop", Namespace: ns,
		Desired: decode(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: forbidden}\n")})
	var pe *PlanError
	if !errors.As(err, &pe) || res.Phase != Failed || !strings.Contains(err.Error(), "ConfigMap "+ns+"/forbidden: not allowed here") {
		t.Fatalf("phase %s err %v", res.Phase, err)
	}
	if counter.count() != 0 {
		t.Fatalf("%d writes despite a refused object", counter.count())
	}
	plain, _ := newSyncer(t, nil)
	res, err = plain.Sync(context.Background(), Request{App: "shop", Namespace: ns, Desired: decode(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: old}\n")})
	mustSucceed(t, res, err)
	res, err = s.Sync(context.Background(), Request{App: "shop", Namespace: ns, Prune: true, Desired: decode(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n")})
	mustSucceed(t, res, err)
	if r := row(t, res, "ConfigMap "+ns+"/old"); r.Status != TaskSkipped || !strings.Contains(r.Message, "not allowed here") {
		t.Fatalf("refused prune row %+v", r)
	}
	if _, ok := get(t, gvrConfigMaps, ns, "old"); !ok {
		t.Fatal("a refused prune deleted")
	}
}
