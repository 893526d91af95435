package enginetest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/kubegitops/gitops/examples/operator/config"
	"github.com/kubegitops/gitops/notify"
	"github.com/prometheus/client_golang/prometheus"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestAnnotationStateSurvivesRestart: with Argo CD's
// notified.notifications.argoproj.io annotation on the Application in the
// cluster as the state, a restarted controller (a new one, new clients,
// the same cluster) sends nothing again, and a new revision is sent.
func TestAnnotationStateSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(cluster.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := config.Install(ctx, cl, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	var mu gosync.Mutex
	var bodies []string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
	}))
	defer recv.Close()
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(bodies) }
	cfg, err := notify.Load(notify.WithCatalog(map[string]string{
		"service.webhook.receiver":    "url: " + recv.URL,
		"template.app-sync-succeeded": `webhook: {receiver: {method: POST, body: '{{.app.status.operationState.syncResult.revision}}'}}`,
	}), nil, notify.DefaultLoadOptions())
	if err != nil {
		t.Fatal(err)
	}
	annotations := map[string]any{"notifications.argoproj.io/subscribe.on-sync-succeeded.receiver": ""}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": "web", "namespace": ns, "annotations": annotations},
		"spec": map[string]any{"project": "default",
			"source":      map[string]any{"repoURL": "https://example.com/r.git", "path": "app"},
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": ns}},
	}}
	start := func() (*notify.Controller, dynamic.Interface, func()) {
		dyn, err := dynamic.NewForConfig(cluster.Config())
		if err != nil {
			t.Fatal(err)
		}
		ctl, err := notify.NewController(cfg, notify.ControllerOptions{Registerer: prometheus.NewRegistry(),
			State: notify.NewAnnotationState(notify.DynamicAnnotations{Client: dyn})})
		if err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = ctl.Run(rctx) }()
		return ctl, dyn, func() { cancel(); <-done }
	}
	first, dyn, stop := start()
	if _, err := dyn.Resource(notify.ApplicationGVR).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	app := func(rev, phase string) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": "web", "namespace": ns, "annotations": annotations},
			"status": map[string]any{"operationState": map[string]any{"phase": phase, "syncResult": map[string]any{"revision": rev}}}}
	}
	first.Observe(app("abc", "Succeeded"))
	waitFor(t, "the webhook", func() bool { return count() == 1 && first.Idle() })
	first.Observe(app("abc", "Running")) // a self-heal of the same revision
	first.Observe(app("abc", "Succeeded"))
	waitFor(t, "evaluated", first.Idle)
	stop()
	got, err := dyn.Resource(notify.ApplicationGVR).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var state map[string]int64
	if err := json.Unmarshal([]byte(got.GetAnnotations()[notify.NotifiedAnnotation]), &state); err != nil || len(state) != 1 {
		t.Fatalf("annotation %q: %v", got.GetAnnotations()[notify.NotifiedAnnotation], err)
	}
	for k := range state {
		if !strings.HasPrefix(k, "abc:on-sync-succeeded:[0].") || !strings.HasSuffix(k, ":receiver:") {
			t.Errorf("state key %q, want Argo CD's <oncePer>:<trigger>:<condition>:<service>:<recipient>", k)
		}
	}

	second, _, stop2 := start()
	defer stop2()
	second.Observe(app("abc", "Succeeded"))
	second.Observe(app("def", "Succeeded"))
	waitFor(t, "the new revision's webhook", func() bool { return count() >= 2 && second.Idle() })
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 2 || bodies[0] != "abc" || bodies[1] != "def" {
		t.Errorf("webhooks %q, want abc once (before the restart) and def", bodies)
	}
}
