package diff

import (
	"context"
	"encoding/json"
	"os"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/testenv"
)

var cluster *testenv.Cluster

func TestMain(m *testing.M) {
	os.Exit(testenv.RunMain(m, testenv.Options{APIServerOnly: true}, &cluster))
}

var widgetGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// ensureWidgetCRD installs the Widget CRD of group example.com (its schema
// sets defaults, also inside a keyed list) and waits until it is served
// and its OpenAPI model published; the package's tests share it.
func ensureWidgetCRD(t testing.TB) {
	t.Helper()
	testfiles.EnsureCRD(t, cluster.Config(), testfiles.WidgetCRD("example.com"))
}

// apply server-side-applies obj as manager and returns the live object.
func apply(t testing.TB, dyn dynamic.Interface, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, manager string) *unstructured.Unstructured {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	data, _ := json.Marshal(obj.Object)
	force := true
	live, err := dyn.Resource(gvr).Namespace(obj.GetNamespace()).Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: manager, Force: &force})
	if err != nil {
		t.Fatal(err)
	}
	return live
}

// countingApplier counts the dry runs that reach the real applier.
type countingApplier struct {
	inner DryRunApplier
	calls atomic.Int64
}

func (c *countingApplier) DryRunApply(ctx context.Context, obj *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error) {
	c.calls.Add(1)
	return c.inner.DryRunApply(ctx, obj, manager)
}

func changePaths(res Result) []string {
	var out []string
	for _, c := range res.Changes {
		out = append(out, c.Path)
	}
	return out
}

// TestServerSideDiffCRDDefaults runs server-side diff against the local
// cluster on a custom resource whose schema sets defaults (top level and
// inside a keyed list): in sync after apply, then a changed field, a
// removed field and an added list item; structured merge with the
// cluster's OpenAPI must agree on every step (argo-cd#23126, #21817).
func TestServerSideDiffCRDDefaults(t *testing.T) {
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	ensureWidgetCRD(t)
	ns := cluster.TestNamespace(t)
	applier, err := NewDryRunApplier(cluster.Config(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	counter := &countingApplier{inner: applier}
	schemaSrc, err := NewClusterSchema(cluster.Config(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ssdOpts := DefaultOptions()
	ssdOpts.Mode = ModeServerSide
	ssdOpts.DryRun = counter
	ssdOpts.Schema = schemaSrc
	ssd := mustDiffer(t, ssdOpts)
	smdOpts := DefaultOptions()
	smdOpts.Mode = ModeStructuredMerge
	smdOpts.Schema = schemaSrc
	smd := mustDiffer(t, smdOpts)

	desired := mustObject(t, `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
spec:
  color: red
  ports: [{name: http, port: 80}]
`)
	desired.SetNamespace(ns)
	live := apply(t, dyn, widgetGVR, desired, DefaultFieldManager)
	if mode, _, _ := unstructured.NestedString(live.Object, "spec", "mode"); mode != "fast" {
		t.Fatalf("CRD default not applied: %v", live.Object["spec"])
	}
	ctx := context.Background()

	steps := []struct {
		name  string
		edit  func(u *unstructured.Unstructured)
		paths []string
	}{
		{"in sync", func(*unstructured.Unstructured) {}, nil},
		{"changed", func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, "blue", "spec", "color") }, []string{"/spec/color"}},
		{"removed", func(u *unstructured.Unstructured) { unstructured.RemoveNestedField(u.Object, "spec", "color") }, []string{"/spec/color"}},
		{"list item added", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedSlice(u.Object, []any{
				map[string]any{"name": "http", "port": int64(80)},
				map[string]any{"name": "https", "port": int64(443)},
			}, "spec", "ports")
		}, []string{"/spec/ports/1"}},
	}
	for _, step := range steps {
		want := desired.DeepCopy()
		step.edit(want)
		for name, d := range map[string]*Differ{"server-side": ssd, "structured-merge": smd} {
			res, err := d.Diff(ctx, want, live)
			if err != nil {
				t.Fatalf("%s %s: %v", step.name, name, err)
			}
			got := changePaths(res)
			if len(got) != len(step.paths) || (len(got) > 0 && got[0] != step.paths[0]) {
				t.Errorf("%s %s: changes %v, want %v\n%s", step.name, name, got, step.paths, res.Text)
			}
			if step.name == "list item added" && name == "server-side" {
				// The server defaulted the new item's protocol: predicted
				// shows it, because the item is ours.
				ports, _, _ := unstructured.NestedSlice(res.PredictedLive.Object, "spec", "ports")
				if len(ports) != 2 || ports[1].(map[string]any)["protocol"] != "TCP" {
					t.Errorf("predicted ports %v, want the server's default protocol in the new item", ports)
				}
			}
		}
	}

	// The dry run is cached on (desired, live resourceVersion).
	before := counter.calls.Load()
	for i := 0; i < 3; i++ {
		if _, err := ssd.Diff(ctx, desired, live); err != nil {
			t.Fatal(err)
		}
	}
	if n := counter.calls.Load() - before; n != 0 {
		t.Errorf("%d dry runs for a cached (desired, resourceVersion), want 0", n)
	}
	changed := desired.DeepCopy()
	_ = unstructured.SetNestedField(changed.Object, "green", "spec", "color")
	live2 := apply(t, dyn, widgetGVR, changed, "someone-else")
	res, err := ssd.Diff(ctx, desired, live2)
	if err != nil {
		t.Fatal(err)
	}
	if n := counter.calls.Load() - before; n != 1 {
		t.Errorf("%d dry runs after the live object changed, want 1", n)
	}
	if got := changePaths(res); len(got) != 1 || got[0] != "/spec/color" {
		t.Errorf("after another manager changed color: %v, want /spec/color", got)
	}
}

// TestServerSideDiffDeployment checks a built-in kind end to end: a
// Deployment applied with our manager is in sync under server-side diff,
// and an image change is one change.
func TestServerSideDiffDeployment(t *testing.T) {
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	ns := cluster.TestNamespace(t)
	applier, err := NewDryRunApplier(cluster.Config(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions()
	opts.DryRun = applier
	d := mustDiffer(t, opts)
	c := loadCorpusCase(t, "testdata/corpus/05-container-ports.yaml")
	desired := (&unstructured.Unstructured{Object: c.Desired}).DeepCopy()
	desired.SetNamespace(ns)
	// Chosen by annotation, as in Argo CD.
	desired.SetAnnotations(map[string]string{"argocd.argoproj.io/compare-options": "ServerSideDiff=true"})
	deployGVR := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	live := apply(t, dyn, deployGVR, desired, DefaultFieldManager)
	res, err := d.Diff(context.Background(), desired, live)
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != ModeServerSide || res.Modified {
		t.Fatalf("mode %s modified %v: %v\n%s", res.Mode, res.Modified, res.Changes, res.Text)
	}
	containers, _, _ := unstructured.NestedSlice(desired.Object, "spec", "template", "spec", "containers")
	containers[0].(map[string]any)["image"] = "nginx:1.27"
	_ = unstructured.SetNestedSlice(desired.Object, containers, "spec", "template", "spec", "containers")
	res, err = d.Diff(context.Background(), desired, live)
	if err != nil {
		t.Fatal(err)
	}
	if got := changePaths(res); len(got) != 1 || got[0] != "/spec/template/spec/containers/0/image" {
		t.Errorf("changes %v, want the image", got)
	}
}

// TestStructuredMergeOfflineSchema saves the cluster's OpenAPI v3 document
// for the Widget CRD, as a pipeline would keep it next to its manifests,
// and diffs offline with it: the keyed list merges by key (one added item
// is one change), where a deduced schema would replace the list whole.
func TestStructuredMergeOfflineSchema(t *testing.T) {
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	ensureWidgetCRD(t)
	ns := cluster.TestNamespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dc := discoveryClient(t)
	// The API server publishes a new CRD's OpenAPI shortly after serving it.
	var doc []byte
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		raw, err := dc.RESTClient().Get().AbsPath("/openapi/v3/apis/example.com/v1").Do(ctx).Raw()
		doc = raw
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("OpenAPI of example.com/v1 never published: %v", err)
	}
	offline, err := SchemaFromOpenAPIV3(doc)
	if err != nil {
		t.Fatal(err)
	}
	desired := mustObject(t, `
apiVersion: example.com/v1
kind: Widget
metadata: {name: offline}
spec:
  ports: [{name: http, port: 80}]
`)
	desired.SetNamespace(ns)
	live := apply(t, dyn, widgetGVR, desired, DefaultFieldManager)
	want := desired.DeepCopy()
	_ = unstructured.SetNestedSlice(want.Object, []any{
		map[string]any{"name": "http", "port": int64(80)},
		map[string]any{"name": "https", "port": int64(443)},
	}, "spec", "ports")
	opts := DefaultOptions()
	opts.Mode = ModeStructuredMerge
	opts.Schema = offline
	res, err := mustDiffer(t, opts).Diff(ctx, want, live)
	if err != nil {
		t.Fatal(err)
	}
	if got := changePaths(res); len(got) != 1 || got[0] != "/spec/ports/1" {
		t.Errorf("offline schema: changes %v, want /spec/ports/1", got)
	}
	// The in-sync object stays in sync: the defaulted protocol of the
	// existing item is kept, not reverted.
	res, err = mustDiffer(t, opts).Diff(ctx, desired, live)
	if err != nil || res.Modified {
		t.Errorf("offline schema, in sync: %v %v", res.Changes, err)
	}
}

func discoveryClient(t testing.TB) *discovery.DiscoveryClient {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	return dc
}

// mutatingApplier stands in for a mutating admission webhook (which the
// local cluster does not run): it adds a sidecar annotation to the real dry
// run's result, owned by no manager, as a webhook's change would be.
type mutatingApplier struct{ inner DryRunApplier }

func (m mutatingApplier) DryRunApply(ctx context.Context, obj *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error) {
	out, err := m.inner.DryRunApply(ctx, obj, manager)
	if err != nil {
		return nil, err
	}
	_ = unstructured.SetNestedField(out.Object, "injected", "spec", "template", "metadata", "annotations", "sidecar.example.com/status")
	return out, nil
}

// TestServerSideDiffHidesWebhookMutations checks that a change the dry run
// shows in a field our manager does not own is not a difference by
// default, and is one with IncludeMutationWebhook (option or annotation).
func TestServerSideDiffHidesWebhookMutations(t *testing.T) {
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	ns := cluster.TestNamespace(t)
	applier, err := NewDryRunApplier(cluster.Config(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c := loadCorpusCase(t, "testdata/corpus/01-deployment-defaults.yaml")
	desired := (&unstructured.Unstructured{Object: c.Desired}).DeepCopy()
	desired.SetNamespace(ns)
	live := apply(t, dyn, schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, desired, DefaultFieldManager)

	opts := DefaultOptions()
	opts.Mode = ModeServerSide
	opts.DryRun = mutatingApplier{inner: applier}
	res, err := mustDiffer(t, opts).Diff(context.Background(), desired, live)
	if err != nil {
		t.Fatal(err)
	}
	if res.Modified {
		t.Errorf("webhook mutation reported as a change: %v", res.Changes)
	}
	opts.IncludeMutationWebhook = true
	res, err = mustDiffer(t, opts).Diff(context.Background(), desired, live)
	if err != nil {
		t.Fatal(err)
	}
	if got := changePaths(res); len(got) != 1 || got[0] != "/spec/template/metadata/annotations" {
		t.Errorf("IncludeMutationWebhook: changes %v, want the injected annotations", got)
	}
}
