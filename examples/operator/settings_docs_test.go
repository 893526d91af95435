package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/argocdcm"
	"github.com/kubegitops/gitops/internal/argodocs"
	"github.com/kubegitops/gitops/resource"
)

// syncBuffer is a log the operator writes while a test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// operatorRun is an operator started by a test, with its log.
type operatorRun struct {
	log  *syncBuffer
	done chan error
}

// runOperator runs the operator with args (and -kubeconfig) until the
// test ends, its log in a buffer.
func runOperator(t *testing.T, args ...string) *operatorRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	o := &operatorRun{log: &syncBuffer{}, done: make(chan error, 1)}
	go func() {
		o.done <- runWith(ctx, append([]string{"-kubeconfig", cluster.Kubeconfig()}, args...), io.MultiWriter(o.log))
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-o.done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("run: %v", err)
		}
	})
	return o
}

// testClient is a client of the test cluster that knows Argo CD's kinds.
func testClient(t *testing.T) client.WithWatch {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha1.AddToScheme(scheme), eventsv1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	c, err := client.NewWithWatch(cluster.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// docsConfigMap reads a ConfigMap of docs/operator-manual of Argo CD's
// release, as it is, into namespace ns.
func docsConfigMap(t *testing.T, name, ns string) *corev1.ConfigMap {
	t.Helper()
	raw := argodocs.ForTest(t).MustReadFile(t, "docs/operator-manual/"+name)
	cm := &corev1.ConfigMap{}
	if err := yaml.Unmarshal(raw, cm); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	cm.Namespace = ns
	return cm
}

// settingEvents are the notes of the Events on ConfigMap name of ns, by
// reason, with how often each was counted.
func settingEvents(ctx context.Context, t *testing.T, c client.Client, ns, name string) (map[string][]string, map[string]int32) {
	t.Helper()
	var list eventsv1.EventList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Logf("listing Events: %v", err)
		return nil, nil
	}
	notes, counts := map[string][]string{}, map[string]int32{}
	for _, e := range list.Items {
		if e.Regarding.Kind != "ConfigMap" || e.Regarding.Name != name {
			continue
		}
		notes[e.Reason] = append(notes[e.Reason], e.Note)
		n := int32(1)
		if e.Series != nil {
			n = e.Series.Count
		}
		counts[e.Reason+"\x00"+e.Note] += n
	}
	return notes, counts
}

// waitEvents polls the Events of ConfigMap name until ok holds of them.
func waitEvents(ctx context.Context, t *testing.T, c client.Client, ns, name, what string, ok func(map[string][]string) bool) map[string][]string {
	t.Helper()
	var notes map[string][]string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		notes, _ = settingEvents(ctx, t, c, ns, name)
		return ok(notes), nil
	})
	if err != nil {
		t.Errorf("Events of %s: not %s: %q", name, what, notes)
	}
	return notes
}

// TestSettingsArgoCDDocsFiles applies Argo CD's own argocd-cm.yaml (its
// resource.inclusions removed, as a user would: it watches one kind) and
// argocd-cmd-params-cm.yaml of the release, unchanged, and runs the
// operator on them: apps still sync, under the documented settings
// (installationID marks what they apply; Argo CD's log defaults are taken,
// the log turns to JSON), and every key is applied or named in an Event of
// its ConfigMap, the ignored ones all of them, not one.
func TestSettingsArgoCDDocsFiles(t *testing.T) {
	ns, dest := cluster.TestNamespace(t), cluster.TestNamespace(t)
	ctx := context.Background()
	c := testClient(t)
	argocdCM := docsConfigMap(t, "argocd-cm.yaml", ns)
	delete(argocdCM.Data, "resource.inclusions")
	params := docsConfigMap(t, "argocd-cmd-params-cm.yaml", ns)
	for _, o := range []client.Object{argocdCM, params} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	repo := writeRepo(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello}\ndata: {a: b}\n"})
	op := runOperator(t, "-namespace", ns, "-metrics-bind-address", "0", "-health-probe-bind-address", "0")
	app := createApp(ctx, t, c, ns, dest, repo)
	waitFor(t, c, app, "Synced and Healthy", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == "Synced" && a.Status.Health.Status == "Healthy"
	})
	live := &corev1.ConfigMap{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: dest, Name: "hello"}, live); err != nil {
		t.Fatal(err)
	}
	if id := live.Annotations[resource.AnnotationArgoInstallationID]; id != "my-unique-id" {
		t.Errorf("installation id %q on the synced object, want argocd-cm installationID's my-unique-id", id)
	}
	if !strings.Contains(op.log.String(), `{"time":`) {
		t.Errorf("the log is not JSON (controller.log.format: json): %.300s", op.log.String())
	}
	for _, cm := range []*corev1.ConfigMap{argocdCM, params} {
		// The keys that set nothing here: each named in an Event.
		var unnamed []string
		notes := waitEvents(ctx, t, c, ns, cm.Name, "naming every key that sets nothing here", func(n map[string][]string) bool {
			all := strings.Join(append(n[ReasonUnusedSetting], n[ReasonUnsupportedSetting]...), "\n")
			unnamed = unnamed[:0]
			for key, value := range cm.Data {
				k, ok := lookupKey(cm.Name, key)
				switch {
				case !ok:
					unnamed = append(unnamed, key+" (in no table)")
				case k.Use == argocdcm.UseApplied:
				case k.Use == argocdcm.UseNotImplemented && k.Same != "" && (value == k.Same || value == ""):
				case k.Use == argocdcm.UseNotImplemented && k.Same == "" && value == "":
				case !strings.Contains(all, key):
					unnamed = append(unnamed, key)
				}
			}
			return len(unnamed) == 0
		})
		if len(notes[ReasonInvalidSetting]) > 0 {
			t.Errorf("%s: documented values flagged invalid: %q", cm.Name, notes[ReasonInvalidSetting])
		}
		if len(unnamed) > 0 {
			t.Errorf("%s: keys named in no Event: %v", cm.Name, unnamed)
			for _, l := range strings.Split(op.log.String(), "\n") {
				if strings.Contains(strings.ToLower(l), "event") && !strings.Contains(l, "EventSource") {
					t.Log(l)
				}
			}
		}
	}
	notes, _ := settingEvents(ctx, t, c, ns, params.Name)
	unsupported := strings.Join(notes[ReasonUnsupportedSetting], "\n")
	for _, key := range []string{"reposerver.enable.git.submodule", "applicationsetcontroller.enable.git.submodule"} {
		if !strings.Contains(unsupported, key) {
			t.Errorf("%s not reported unsupported: %q", key, unsupported)
		}
	}
}

// lookupKey is the table entry of a key of one of the two ConfigMaps.
func lookupKey(configMap, key string) (argocdcm.Key, bool) {
	if configMap == argocdcm.ParamsConfigMapName {
		return argocdcm.LookupParam(key)
	}
	if k, ok := argocdcm.LookupSetting(key); ok {
		return k, true
	}
	return argocdcm.Key{}, false
}

// createApp creates the Application ns/<ns> of repo's folder app, synced
// automatically into dest, once the CRD is served, and returns its key.
// It is named after its namespace: an app name is the app's tracking key,
// and the objects of other tests' apps stay in their namespaces (the test
// cluster finalises none).
func createApp(ctx context.Context, t *testing.T, c client.Client, ns, dest, repo string) types.NamespacedName {
	t.Helper()
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ns}, Spec: v1alpha1.ApplicationSpec{
		Project:     "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: "file://" + repo, Path: "app"},
		Destination: v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: dest},
		SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{SelfHeal: true}},
	}}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return c.Create(ctx, app.DeepCopy()) == nil, nil
	})
	if err != nil {
		t.Fatalf("create Application: %v", err)
	}
	return types.NamespacedName{Namespace: ns, Name: ns}
}

// waitFor waits until ok holds of the Application key.
func waitFor(t *testing.T, c client.Client, key types.NamespacedName, what string, ok func(*v1alpha1.Application) bool) {
	t.Helper()
	got := &v1alpha1.Application{}
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, got); err != nil {
			return false, nil
		}
		return ok(got), nil
	})
	if err != nil {
		t.Fatalf("Application %s not %s: %v; status %+v", key, what, err, got.Status)
	}
}
