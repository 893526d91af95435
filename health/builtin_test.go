package health

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// live loads an object captured from the local cluster (testdata/live).
func live(t testing.TB, name string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "live", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{}
	if err := yaml.Unmarshal(data, &obj); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

// set sets a field by path; value nil removes it.
func set(value any, path ...string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		if value == nil {
			unstructured.RemoveNestedField(u.Object, path...)
			return
		}
		if err := unstructured.SetNestedField(u.Object, value, path...); err != nil {
			panic(err)
		}
	}
}

func cond(typ, status, reason, message string) any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": message}
}

func conds(c ...any) func(*unstructured.Unstructured) {
	return set(c, "status", "conditions")
}

type builtinCase struct {
	name    string
	fixture string
	change  []func(*unstructured.Unstructured)
	want    Code
	message string // substring of the message; "" checks nothing
}

func runBuiltinCases(t *testing.T, cases []builtinCase) {
	t.Helper()
	checker, err := NewChecker(DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj := live(t, c.fixture)
			for _, f := range c.change {
				f(obj)
			}
			st, err := checker.Check(obj)
			if err != nil {
				t.Fatal(err)
			}
			if st == nil {
				t.Fatalf("no health, want %s", c.want)
			}
			if st.Code != c.want || !strings.Contains(st.Message, c.message) {
				t.Fatalf("got %s, want %s with message containing %q", st, c.want, c.message)
			}
		})
	}
}

func TestBuiltin_Deployment(t *testing.T) {
	runBuiltinCases(t, []builtinCase{
		{"available", "deployment-web", nil, Healthy, ""},
		{"paused", "deployment-web", fns(set(true, "spec", "paused")), Suspended, "paused"},
		{"generation not observed", "deployment-web", fns(set(int64(9), "metadata", "generation")), Progressing, "observed deployment generation"},
		{"progress deadline exceeded", "deployment-web", fns(conds(cond("Progressing", "False", "ProgressDeadlineExceeded", "ReplicaSet has timed out progressing."))), Degraded, `"web" exceeded its progress deadline`},
		{"updating", "deployment-web", fns(set(int64(1), "status", "updatedReplicas")), Progressing, "1 out of 2 new replicas have been updated"},
		{"old replicas terminating", "deployment-web", fns(set(int64(3), "status", "replicas")), Progressing, "1 old replicas are pending termination"},
		{"not available yet", "deployment-web", fns(set(int64(1), "status", "availableReplicas")), Progressing, "1 of 2 updated replicas are available"},
		{"no status yet", "deployment-web", fns(set(nil, "status")), Progressing, ""},
	})
}

func TestBuiltin_StatefulSet(t *testing.T) {
	runBuiltinCases(t, []builtinCase{
		{"rolled out", "statefulset-db", nil, Healthy, "rolling update complete 2 pods at revision"},
		{"on delete", "statefulset-cache", nil, Healthy, "statefulset has 1 ready pods"},
		{"on delete with old revision", "statefulset-cache", fns(set("cache-old", "status", "currentRevision")), Healthy, "ready pods"},
		{"not observed", "statefulset-db", fns(set(nil, "status", "observedGeneration")), Progressing, "spec update to be observed"},
		{"pods not ready", "statefulset-db", fns(set(int64(1), "status", "readyReplicas")), Progressing, "Waiting for 1 pods to be ready"},
		{"rolling", "statefulset-db", fns(set("db-new", "status", "updateRevision")), Progressing, "waiting for statefulset rolling update to complete"},
		{"partition pending", "statefulset-db", fns(set(int64(1), "spec", "updateStrategy", "rollingUpdate", "partition"), set(int64(0), "status", "updatedReplicas")), Progressing, "0 out of 1 new pods have been updated"},
		{"partition done", "statefulset-db", fns(set(int64(1), "spec", "updateStrategy", "rollingUpdate", "partition"), set(int64(1), "status", "updatedReplicas"), set("db-new", "status", "updateRevision")), Healthy, "partitioned roll out complete"},
	})
}

func TestBuiltin_DaemonSet(t *testing.T) {
	runBuiltinCases(t, []builtinCase{
		{"rolled out", "daemonset-agent", nil, Healthy, ""},
		{"generation behind", "daemonset-agent", fns(set(int64(5), "metadata", "generation")), Progressing, "observed daemon set generation"},
		{"updating", "daemonset-agent", fns(set(int64(0), "status", "updatedNumberScheduled")), Progressing, "0 out of 1 new pods have been updated"},
		{"unavailable", "daemonset-agent", fns(set(int64(0), "status", "numberAvailable")), Progressing, "0 of 1 updated pods are available"},
		{"on delete", "daemonset-agent", fns(set("OnDelete", "spec", "updateStrategy", "type"), set(int64(0), "status", "updatedNumberScheduled")), Healthy, "0 out of 1 new pods"},
	})
}

func TestBuiltin_ReplicaSet(t *testing.T) {
	runBuiltinCases(t, []builtinCase{
		{"available", "replicaset-rs", nil, Healthy, ""},
		{"quota", "replicaset-rs", fns(conds(cond("ReplicaFailure", "True", "FailedCreate", `pods "rs-x" is forbidden: exceeded quota`))), Degraded, "exceeded quota"},
		{"scaling", "replicaset-rs", fns(set(int64(3), "spec", "replicas")), Progressing, "1 out of 3 new replicas are available"},
		{"generation behind", "replicaset-rs", fns(set(int64(4), "metadata", "generation")), Progressing, "observed replica set generation"},
	})
}

func crashLooping(reason string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		cs := map[string]any{
			"name":         "solo",
			"ready":        false,
			"restartCount": int64(4),
			"state":        map[string]any{"waiting": map[string]any{"reason": "CrashLoopBackOff", "message": `back-off 1m20s restarting failed container=solo pod=solo_test(8f0c)`}},
			"lastState":    map[string]any{"terminated": map[string]any{"reason": reason, "exitCode": int64(137)}},
		}
		_ = unstructured.SetNestedSlice(u.Object, []any{cs}, "status", "containerStatuses")
	}
}

func TestBuiltin_Pod(t *testing.T) {
	failed := func(u *unstructured.Unstructured) {
		set("Failed", "status", "phase")(u)
		cs := map[string]any{"name": "solo", "state": map[string]any{"terminated": map[string]any{"reason": "Error", "exitCode": int64(3)}}}
		_ = unstructured.SetNestedSlice(u.Object, []any{cs}, "status", "containerStatuses")
	}
	oom := func(u *unstructured.Unstructured) {
		set("Failed", "status", "phase")(u)
		cs := map[string]any{"name": "solo", "state": map[string]any{"terminated": map[string]any{"reason": "OOMKilled", "exitCode": int64(137)}}}
		_ = unstructured.SetNestedSlice(u.Object, []any{cs}, "status", "containerStatuses")
	}
	imagePull := func(u *unstructured.Unstructured) {
		set("Pending", "status", "phase")(u)
		cs := map[string]any{"name": "solo", "state": map[string]any{"waiting": map[string]any{"reason": "ImagePullBackOff", "message": `Back-off pulling image "registry.example/solo:1.0"`}}}
		_ = unstructured.SetNestedSlice(u.Object, []any{cs}, "status", "containerStatuses")
	}
	restarted := func(u *unstructured.Unstructured) {
		conds(cond("Ready", "False", "ContainersNotReady", ""))(u)
		cs := map[string]any{"name": "solo", "state": map[string]any{"running": map[string]any{}}, "lastState": map[string]any{"terminated": map[string]any{"reason": "Error", "exitCode": int64(1)}}}
		_ = unstructured.SetNestedSlice(u.Object, []any{cs}, "status", "containerStatuses")
	}
	runBuiltinCases(t, []builtinCase{
		{"running and ready", "pod-solo", nil, Healthy, ""},
		{"unschedulable", "pod-stuck", nil, Progressing, ""},
		{"crash loop with OOMKilled", "pod-solo", fns(crashLooping("OOMKilled")), Degraded, "last termination: OOMKilled, exit code 137"},
		{"image pull back-off", "pod-solo", fns(imagePull), Degraded, "Back-off pulling image"},
		{"image pull back-off in a hook pod", "pod-solo", fns(imagePull, set("Never", "spec", "restartPolicy")), Progressing, ""},
		{"failed with exit code", "pod-solo", fns(failed), Degraded, `container "solo" failed with exit code 3`},
		{"failed OOMKilled", "pod-solo", fns(oom), Degraded, `container "solo" was OOMKilled`},
		{"failed with pod message", "pod-solo", fns(failed, set("Pod was active on the node longer than the specified deadline", "status", "message")), Degraded, "longer than the specified deadline"},
		{"succeeded", "pod-solo", fns(set("Succeeded", "status", "phase")), Healthy, ""},
		{"running hook", "pod-solo", fns(set("OnFailure", "spec", "restartPolicy")), Progressing, ""},
		{"running hook, restart policy ignored", "pod-solo", fns(set("Never", "spec", "restartPolicy"), set(map[string]any{AnnotationIgnoreRestartPolicy: "true"}, "metadata", "annotations")), Healthy, ""},
		{"not ready after a restart", "pod-solo", fns(restarted), Degraded, `container "solo" failed with exit code 1`},
		{"not ready yet", "pod-solo", fns(conds(cond("Ready", "False", "ContainersNotReady", ""))), Progressing, ""},
		{"unknown phase", "pod-solo", fns(set("Unknown", "status", "phase")), Unknown, ""},
	})
}

func TestBuiltin_CoreKinds(t *testing.T) {
	runBuiltinCases(t, []builtinCase{
		{"pvc pending", "persistentvolumeclaim-data", nil, Progressing, ""},
		{"pvc bound", "persistentvolumeclaim-data", fns(set("Bound", "status", "phase")), Healthy, ""},
		{"pvc lost", "persistentvolumeclaim-data", fns(set("Lost", "status", "phase")), Degraded, "lost"},
		{"service", "service-web", nil, Healthy, ""},
		{"load balancer pending", "service-public", nil, Progressing, "load balancer"},
		{"load balancer ready", "service-public", fns(set([]any{map[string]any{"ip": "203.0.113.9"}}, "status", "loadBalancer", "ingress")), Healthy, ""},
		{"ingress pending", "ingress-web", nil, Progressing, ""},
		{"ingress ready", "ingress-web", fns(set([]any{map[string]any{"hostname": "lb.example.com"}}, "status", "loadBalancer", "ingress")), Healthy, ""},
		{"namespace", "namespace-test", nil, Healthy, ""},
		{"namespace terminating", "namespace-test", fns(set("Terminating", "status", "phase")), Progressing, "terminating"},
	})
}

func TestBuiltin_Batch(t *testing.T) {
	runBuiltinCases(t, []builtinCase{
		{"job complete", "job-once", nil, Healthy, ""},
		{"job failed on deadline", "job-migrate", nil, Degraded, "deadline"},
		{"job suspended", "job-later", nil, Suspended, ""},
		{"job running", "job-once", fns(set(nil, "status", "conditions")), Progressing, ""},
		{"job failure target only", "job-once", fns(conds(cond("FailureTarget", "True", "BackoffLimitExceeded", "Job has reached the specified backoff limit"))), Progressing, ""},
		{"job resumed", "job-later", fns(set(false, "spec", "suspend"), conds(cond("Suspended", "False", "JobResumed", "Job resumed"))), Progressing, ""},
		{"cronjob never scheduled", "cronjob-hourly", nil, Healthy, "not been scheduled"},
		{"cronjob suspended", "cronjob-nightly", nil, Suspended, "Suspended"},
		{"cronjob last run succeeded", "cronjob-hourly", fns(set("2026-11-29T08:00:00Z", "status", "lastScheduleTime"), set("2026-11-29T08:00:07Z", "status", "lastSuccessfulTime")), Healthy, "completed its last execution successfully"},
		{"cronjob last run failed", "cronjob-hourly", fns(set("2026-11-29T08:00:00Z", "status", "lastScheduleTime"), set("2026-11-29T07:00:05Z", "status", "lastSuccessfulTime")), Degraded, "has not completed"},
		{"cronjob running", "cronjob-hourly", fns(set("2026-11-29T08:00:00Z", "status", "lastScheduleTime"), set("2026-11-29T07:00:05Z", "status", "lastSuccessfulTime"), set([]any{map[string]any{"name": "hourly-29391840"}}, "status", "active")), Progressing, "running"},
		{"cronjob first run failed", "cronjob-hourly", fns(set("2026-11-29T08:00:00Z", "status", "lastScheduleTime")), Degraded, ""},
	})
}

func TestBuiltin_ClusterKinds(t *testing.T) {
	runBuiltinCases(t, []builtinCase{
		{"hpa without metrics", "horizontalpodautoscaler-rs", nil, Degraded, "failed to get cpu utilization"},
		{"hpa generation behind", "horizontalpodautoscaler-rs", fns(set(int64(2), "metadata", "generation")), Progressing, "observe generation 2"},
		{"hpa scaling", "horizontalpodautoscaler-rs", fns(conds(cond("AbleToScale", "True", "SucceededRescale", "the HPA controller was able to update the target scale to 3"))), Healthy, "update the target scale"},
		{"hpa waiting", "horizontalpodautoscaler-rs", fns(set(nil, "status", "conditions")), Progressing, "Waiting to Autoscale"},
		{"hpa v1 annotation", "horizontalpodautoscaler-rs", fns(set(nil, "status", "conditions"), set(map[string]any{"autoscaling.alpha.kubernetes.io/conditions": `[{"type":"ScalingLimited","status":"True","reason":"TooFewReplicas","message":"the desired replica count is less than the minimum"}]`}, "metadata", "annotations")), Healthy, "less than the minimum"},
		{"apiservice local", "apiservice-v1.apps", nil, Healthy, ""},
		{"apiservice unavailable", "apiservice-v1.apps", fns(conds(cond("Available", "False", "MissingEndpoints", "endpoints for service/metrics-server in kube-system have no addresses"))), Progressing, "MissingEndpoints: endpoints"},
		{"apiservice new", "apiservice-v1.apps", fns(set(nil, "status")), Progressing, "Waiting to be processed"},
		{"crd established", "customresourcedefinition-widgets.test.example.com", nil, Healthy, "CRD is healthy"},
		{"crd names conflict", "customresourcedefinition-widgets.test.example.com", fns(conds(cond("NamesAccepted", "False", "ListKindConflict", `"WidgetList" is already in use`), cond("Established", "False", "NotAccepted", "not all names are accepted"))), Degraded, "names have not been accepted"},
		{"crd non-structural", "customresourcedefinition-widgets.test.example.com", fns(conds(cond("NamesAccepted", "True", "", ""), cond("Established", "True", "", ""), cond("NonStructuralSchema", "True", "Violations", "spec.versions[0].schema.openAPIV3Schema.type: Required value"))), Degraded, "Schema violations"},
		{"crd terminating", "customresourcedefinition-widgets.test.example.com", fns(conds(cond("Terminating", "True", "InstanceDeletionInProgress", "CustomResource deletion is in progress"))), Progressing, "terminating"},
		{"crd new", "customresourcedefinition-widgets.test.example.com", fns(set(nil, "status")), Progressing, "conditions not found"},
		{"pdb satisfied", "poddisruptionbudget-db", nil, Healthy, "healthy pods"},
		{"pdb short, pods not up yet", "poddisruptionbudget-db", fns(set(int64(0), "status", "currentHealthy"), set(int64(1), "status", "desiredHealthy"), conds(cond("DisruptionAllowed", "False", "InsufficientPods", ""))), Healthy, "InsufficientPods: 0 of 1 desired healthy pods"},
		{"pdb cannot be computed", "poddisruptionbudget-db", fns(conds(cond("DisruptionAllowed", "False", "SyncFailed", "found no controllers for pod"))), Degraded, "SyncFailed"},
		{"pdb not observed", "poddisruptionbudget-db", fns(set(nil, "status", "observedGeneration")), Progressing, ""},
	})
}

func TestBuiltin_Application(t *testing.T) {
	app := func(status map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
			"metadata": map[string]any{"name": "child", "namespace": "argocd"},
			"spec":     map[string]any{"project": "default"},
		}}
		if status != nil {
			u.Object["status"] = status
		}
		return u
	}
	checker, err := NewChecker(DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		obj  *unstructured.Unstructured
		want Status
	}{
		{app(nil), Status{Code: Progressing}},
		{app(map[string]any{"health": map[string]any{"status": "Healthy"}}), Status{Code: Healthy}},
		{app(map[string]any{"health": map[string]any{"status": "Degraded", "message": "Caused by apps/Deployment web/api"}}), Status{Code: Degraded, Message: "Caused by apps/Deployment web/api"}},
		{app(map[string]any{"health": map[string]any{"status": "Sideways"}}), Status{Code: Unknown, Message: `child application reports an invalid health status "Sideways"`}},
	} {
		got, err := checker.Check(c.obj)
		if err != nil || *got != c.want {
			t.Errorf("got %v, %v; want %v", got, err, c.want)
		}
	}
}

func fns(f ...func(*unstructured.Unstructured)) []func(*unstructured.Unstructured) { return f }
