package livetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/testenv"
)

var cluster *testenv.Cluster

func TestMain(m *testing.M) { os.Exit(testenv.RunMain(m, testenv.DefaultOptions(), &cluster)) }

// env is a dynamic client with a REST mapper and a health checker.
type env struct {
	t       *testing.T
	dyn     dynamic.Interface
	mapper  meta.RESTMapper
	reset   func()
	checker *health.DefaultChecker
	ns      string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	cfg := cluster.Config()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cached := memory.NewMemCacheClient(dc)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	checker, err := health.NewChecker(health.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, dyn: dyn, mapper: mapper, reset: cached.Invalidate, checker: checker, ns: cluster.TestNamespace(t)}
}

func (e *env) resourceFor(obj *unstructured.Unstructured) dynamic.ResourceInterface {
	e.t.Helper()
	gvk := obj.GroupVersionKind()
	m, err := e.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		e.reset()
		if m, err = e.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			e.t.Fatalf("%s: %v", resource.KeyOf(obj), err)
		}
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return e.dyn.Resource(m.Resource).Namespace(obj.GetNamespace())
	}
	return e.dyn.Resource(m.Resource)
}

// create decodes a manifest (with NS replaced by the test namespace) and
// creates it, returning the object the API server answered with.
func (e *env) create(ctx context.Context, manifest string) *unstructured.Unstructured {
	e.t.Helper()
	objs, err := resource.Decode("manifest", []byte(strings.ReplaceAll(manifest, "NS", e.ns)), resource.DefaultDecodeOptions())
	if err != nil || len(objs) != 1 {
		e.t.Fatalf("decode: %v (%d objects)", err, len(objs))
	}
	out, err := e.resourceFor(objs[0]).Create(ctx, objs[0], metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create %s: %v", resource.KeyOf(objs[0]), err)
	}
	return out
}

func (e *env) get(ctx context.Context, obj *unstructured.Unstructured) *unstructured.Unstructured {
	e.t.Helper()
	out, err := e.resourceFor(obj).Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("get %s: %v", resource.KeyOf(obj), err)
	}
	return out
}

func (e *env) check(obj *unstructured.Unstructured) health.Status {
	e.t.Helper()
	st, err := e.checker.Check(obj)
	if err != nil {
		e.t.Fatalf("%s: %v", resource.KeyOf(obj), err)
	}
	if st == nil {
		return health.Status{}
	}
	return *st
}

// waitFor polls obj until its health has code want and returns the codes
// seen on the way, the first being the health of start itself.
func (e *env) waitFor(ctx context.Context, start *unstructured.Unstructured, want health.Code, timeout time.Duration) ([]health.Code, *unstructured.Unstructured) {
	e.t.Helper()
	seen := []health.Code{e.check(start).Code}
	last := start
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		last = e.get(ctx, start)
		code := e.check(last).Code
		if seen[len(seen)-1] != code {
			seen = append(seen, code)
		}
		return code == want, nil
	})
	if err != nil {
		y, _ := yaml.Marshal(last.Object)
		e.t.Fatalf("%s never became %s (seen %v): %v\nlast:\n%s", resource.KeyOf(start), want, seen, err, y)
	}
	capture(e.t, last)
	return seen, last
}

// capture writes obj to $GITOPS_HEALTH_CAPTURE/<Kind>-<name>.yaml when that
// variable is set: this is how the fixtures under health/testdata/live were
// made. Without the variable it does nothing.
func capture(t *testing.T, obj *unstructured.Unstructured) {
	dir := os.Getenv("GITOPS_HEALTH_CAPTURE")
	if dir == "" {
		return
	}
	c := obj.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
	data, err := yaml.Marshal(c.Object)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("%s-%s.yaml", strings.ToLower(c.GetKind()), c.GetName())
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLive_DeploymentProgressingThenHealthy(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	created := e.create(ctx, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: NS}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: registry.example/web:1.0}]
`)
	seen, _ := e.waitFor(ctx, created, health.Healthy, time.Minute)
	if seen[0] != health.Progressing {
		t.Fatalf("a just-created Deployment was %s, want Progressing (seen %v)", seen[0], seen)
	}
	// A new template starts a rollout: Progressing again, then Healthy.
	live := e.get(ctx, created)
	containers, _, _ := unstructured.NestedSlice(live.Object, "spec", "template", "spec", "containers")
	containers[0].(map[string]any)["image"] = "registry.example/web:1.1"
	_ = unstructured.SetNestedSlice(live.Object, containers, "spec", "template", "spec", "containers")
	updated, err := e.resourceFor(live).Update(ctx, live, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seen, _ = e.waitFor(ctx, updated, health.Healthy, time.Minute)
	if seen[0] != health.Progressing {
		t.Fatalf("an updated Deployment was %s right after the update, want Progressing (seen %v)", seen[0], seen)
	}
}

// TestLive_FailingJobDegraded makes a Job fail for real: kwok completes
// every Job pod it runs, so the Job's pod is made unschedulable (a node
// selector no node matches) and the Job gets activeDeadlineSeconds: 2; the
// Job controller then fails the Job with reason DeadlineExceeded.
func TestLive_FailingJobDegraded(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	created := e.create(ctx, `
apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: NS}
spec:
  backoffLimit: 0
  activeDeadlineSeconds: 2
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {gitops.kubegitops.io/no-such-node: "true"}
      containers: [{name: migrate, image: registry.example/migrate:1.0}]
`)
	seen, last := e.waitFor(ctx, created, health.Degraded, time.Minute)
	if seen[0] != health.Progressing {
		t.Fatalf("a just-created Job was %s, want Progressing (seen %v)", seen[0], seen)
	}
	if st := e.check(last); !strings.Contains(st.Message, "deadline") {
		t.Fatalf("message %q does not say why", st.Message)
	}
}

func TestLive_JobCompletesHealthy(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	created := e.create(ctx, `
apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: NS}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: once, image: registry.example/once:1.0}]
`)
	e.waitFor(ctx, created, health.Healthy, time.Minute)
}

// TestLive_Kinds judges each built-in kind on objects as the local cluster
// reports them once its controllers have settled.
func TestLive_Kinds(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cases := []struct {
		name     string
		manifest string
		want     health.Code
		message  string // substring
	}{
		{"statefulset", `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: NS}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: registry.example/db:1.0}]}
`, health.Healthy, "rolling update complete"},
		{"statefulset-ondelete", `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: cache, namespace: NS}
spec:
  replicas: 1
  serviceName: cache
  updateStrategy: {type: OnDelete}
  selector: {matchLabels: {app: cache}}
  template:
    metadata: {labels: {app: cache}}
    spec: {containers: [{name: cache, image: registry.example/cache:1.0}]}
`, health.Healthy, "ready pods"},
		{"daemonset", `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: NS}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: registry.example/agent:1.0}]}
`, health.Healthy, ""},
		{"replicaset", `
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs, namespace: NS}
spec:
  replicas: 1
  selector: {matchLabels: {app: rs}}
  template:
    metadata: {labels: {app: rs}}
    spec: {containers: [{name: rs, image: registry.example/rs:1.0}]}
`, health.Healthy, ""},
		{"pod", `
apiVersion: v1
kind: Pod
metadata: {name: solo, namespace: NS}
spec: {containers: [{name: solo, image: registry.example/solo:1.0}]}
`, health.Healthy, ""},
		{"pod-unschedulable", `
apiVersion: v1
kind: Pod
metadata: {name: stuck, namespace: NS}
spec:
  nodeSelector: {gitops.kubegitops.io/no-such-node: "true"}
  containers: [{name: stuck, image: registry.example/stuck:1.0}]
`, health.Progressing, ""},
		{"service", `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: NS}
spec: {selector: {app: web}, ports: [{port: 80}]}
`, health.Healthy, ""},
		{"service-loadbalancer", `
apiVersion: v1
kind: Service
metadata: {name: public, namespace: NS}
spec: {type: LoadBalancer, selector: {app: web}, ports: [{port: 80}]}
`, health.Progressing, "load balancer"},
		{"pvc-pending", `
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: NS}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
`, health.Progressing, ""},
		{"ingress", `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: NS}
spec: {defaultBackend: {service: {name: web, port: {number: 80}}}}
`, health.Progressing, "address"},
		{"cronjob-suspended", `
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: NS}
spec:
  schedule: "0 3 * * *"
  suspend: true
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: job, image: registry.example/job:1.0}]}}}}
`, health.Suspended, "Suspended"},
		{"cronjob", `
apiVersion: batch/v1
kind: CronJob
metadata: {name: hourly, namespace: NS}
spec:
  schedule: "0 0 29 2 *" # 29 February: never fires during a test
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: job, image: registry.example/job:1.0}]}}}}
`, health.Healthy, "not been scheduled"},
		{"job-suspended", `
apiVersion: batch/v1
kind: Job
metadata: {name: later, namespace: NS}
spec:
  suspend: true
  template: {spec: {restartPolicy: Never, containers: [{name: l, image: registry.example/l:1.0}]}}
`, health.Suspended, ""},
		{"pdb", `
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db, namespace: NS}
spec: {minAvailable: 1, selector: {matchLabels: {app: db}}}
`, health.Healthy, "healthy pods"},
		{"hpa-without-metrics", `
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: rs, namespace: NS}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: ReplicaSet, name: rs}
  minReplicas: 1
  maxReplicas: 3
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]
`, health.Degraded, ""},
		{"crd", testfiles.WidgetCRD("NS.example.com"), health.Healthy, "CRD is healthy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.t = t
			created := e.create(ctx, c.manifest)
			if c.name == "crd" {
				t.Cleanup(func() {
					_ = e.resourceFor(created).Delete(context.Background(), created.GetName(), metav1.DeleteOptions{})
				})
			}
			_, last := e.waitFor(ctx, created, c.want, time.Minute)
			if st := e.check(last); !strings.Contains(st.Message, c.message) {
				t.Fatalf("message %q lacks %q", st.Message, c.message)
			}
		})
	}
	t.Run("namespace", func(t *testing.T) {
		e.t = t
		ns := &unstructured.Unstructured{}
		ns.SetAPIVersion("v1")
		ns.SetKind("Namespace")
		ns.SetName(e.ns)
		e.waitFor(ctx, e.get(ctx, ns), health.Healthy, time.Minute)
	})
	t.Run("apiservice", func(t *testing.T) {
		e.t = t
		svc := &unstructured.Unstructured{}
		svc.SetAPIVersion("apiregistration.k8s.io/v1")
		svc.SetKind("APIService")
		svc.SetName("v1.apps")
		e.waitFor(ctx, e.get(ctx, svc), health.Healthy, time.Minute)
	})
}
