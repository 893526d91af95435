package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// pushGate holds the Git server's pushes while armed: the test sees the
// status written during a hydration, then lets the push through.
type pushGate struct {
	armed    atomic.Bool
	entered  chan struct{}
	released chan struct{}
}

func newPushGate() *pushGate {
	return &pushGate{entered: make(chan struct{}), released: make(chan struct{})}
}

// hold is gitserver's PushGate: an armed gate disarms, says a push came
// and waits for release.
func (g *pushGate) hold(*http.Request) {
	if g.armed.CompareAndSwap(true, false) {
		g.entered <- struct{}{}
		<-g.released
	}
}

// await waits for the held push.
func (g *pushGate) await(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-g.entered:
	case <-ctx.Done():
		t.Fatal("no push came to the gate")
	}
}

// release lets the held push go on.
func (g *pushGate) release() { g.released <- struct{}{} }

// The operator writes status.sourceHydrator.currentOperation as Argo
// CD's controller does: phase Hydrating (startedAt, the spec's source
// hydrator, no finishedAt, no commits) while the hydrated commit is being
// pushed, then Hydrated with the dry and hydrated commits; a dry commit
// whose chart does not render is Failed with the reason (the last
// successful operation stays), and the next dry commit that renders
// passes through Hydrating again (the failure's finishedAt and message
// gone) to Hydrated.
func TestOperatorHydrationPhases(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	gate := newPushGate()
	gopts := gitserver.DefaultOptions()
	gopts.PushUsername, gopts.PushPassword = "hydrator", "write-secret"
	gopts.PushGate = gate.hold
	gs := testfiles.GitServer(t, gopts)
	tmpl := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{ .Release.Name }}'}\ndata: {greeting: '{{ .Values.greeting }}'}\n"
	if _, err := gs.CreateRepository(ctx, "phases", fstest.MapFS{
		"chart/Chart.yaml":               {Data: []byte("apiVersion: v2\nname: greeter\nversion: 0.1.0\n")},
		"chart/values.yaml":              {Data: []byte("greeting: hello\n")},
		"chart/templates/configmap.yaml": {Data: []byte(tmpl)},
	}); err != nil {
		t.Fatal(err)
	}
	repoURL := gs.RepoURL("phases")

	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cluster.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns, dest := cluster.TestNamespace(t), cluster.TestNamespace(t)
	for _, obj := range []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "argocd-cmd-params-cm"}, Data: map[string]string{"hydrator.enabled": "true"}},
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "phases-write", Labels: map[string]string{"argocd.argoproj.io/secret-type": "repository-write"}},
			StringData: map[string]string{"url": repoURL, "username": "hydrator", "password": "write-secret"},
		},
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	runCtx, stop := context.WithCancel(ctx)
	ended := make(chan struct{})
	var runErr error
	go func() {
		defer close(ended)
		runErr = run(runCtx, []string{"-kubeconfig", cluster.Kubeconfig(), "-namespace", ns, "-interval", "5s", "-hydrator-interval", "1s",
			"-image-update-interval", "0", "-metrics-bind-address", "0", "-health-probe-bind-address", "0", "-applicationsets=false", "-notifications=false"})
	}()
	defer func() {
		stop()
		<-ended
		if runErr != nil && !errors.Is(runErr, context.Canceled) {
			t.Errorf("run: %v", runErr)
		}
	}()
	key := types.NamespacedName{Namespace: ns, Name: "greeter"}
	got := &v1alpha1.Application{}
	// current polls the app until cond holds of its current operation.
	current := func(what string, cond func(cur *v1alpha1.HydrateOperation) bool) *v1alpha1.HydrateOperation {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			select {
			case <-ended:
				return false, fmt.Errorf("run ended: %v", runErr)
			default:
			}
			if err := c.Get(ctx, key, got); err != nil {
				return false, nil
			}
			cur := got.Status.SourceHydrator.CurrentOperation
			return cur != nil && cond(cur), nil
		})
		if err != nil {
			t.Fatalf("%s: %v (status.sourceHydrator %+v)", what, err, got.Status.SourceHydrator)
		}
		return got.Status.SourceHydrator.CurrentOperation
	}
	// hydrating checks the operation written while a push is held.
	hydrating := func(dry string) {
		t.Helper()
		gate.await(t, ctx)
		if err := c.Get(ctx, key, got); err != nil {
			t.Fatal(err)
		}
		cur := got.Status.SourceHydrator.CurrentOperation
		if cur == nil || cur.Phase != v1alpha1.HydrateOperationPhaseHydrating || cur.StartedAt.IsZero() || cur.FinishedAt != nil ||
			cur.Message != "" || cur.HydratedSHA != "" || cur.SourceHydrator.SyncSource.TargetBranch != "env/dev" {
			t.Errorf("while the push of dry commit %s is held: currentOperation %+v, want Hydrating since startedAt, nothing finished", dry, cur)
		}
		gate.release()
	}

	gate.armed.Store(true)
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "greeter"}, Spec: v1alpha1.ApplicationSpec{
		Project: "default",
		SourceHydrator: &v1alpha1.SourceHydrator{
			DrySource:  v1alpha1.DrySource{RepoURL: repoURL, TargetRevision: "HEAD", Path: "chart"},
			SyncSource: v1alpha1.SyncSource{TargetBranch: "env/dev", Path: "dev"},
		},
		Destination: v1alpha1.ApplicationDestination{Server: v1alpha1.KubernetesInternalAPIServerAddr, Namespace: dest},
	}}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return c.Create(ctx, app.DeepCopy()) == nil, nil
	}); err != nil {
		t.Fatalf("create the Application once the CRD is served: %v", err)
	}
	dry1, err := gs.Head(ctx, "phases")
	if err != nil {
		t.Fatal(err)
	}
	hydrating(dry1)
	cur := current("dry commit 1 hydrated", func(cur *v1alpha1.HydrateOperation) bool {
		return cur.Phase == v1alpha1.HydrateOperationPhaseHydrated && cur.DrySHA == dry1
	})
	first := cur.HydratedSHA
	if tip, err := gs.Git(ctx, "phases", "rev-parse", "refs/heads/env/dev"); err != nil || tip != first || cur.FinishedAt == nil {
		t.Fatalf("env/dev at %s (%v), currentOperation %+v", tip, err, cur)
	}

	if _, err := gs.Commit(ctx, "phases", "break the template", map[string][]byte{"chart/templates/configmap.yaml": []byte(strings.Replace(tmpl, ".Values.greeting", ".Values.greeting | nosuchfunction", 1))}); err != nil {
		t.Fatal(err)
	}
	cur = current("dry commit 2 failed", func(cur *v1alpha1.HydrateOperation) bool {
		return cur.Phase == v1alpha1.HydrateOperationPhaseFailed
	})
	if !strings.HasPrefix(cur.Message, "Failed to hydrate: ") || !strings.Contains(cur.Message, "nosuchfunction") || cur.HydratedSHA != "" || cur.FinishedAt == nil {
		t.Errorf("failed currentOperation %+v, want Argo CD's message naming the template's error and no hydrated commit", cur)
	}
	if last := got.Status.SourceHydrator.LastSuccessfulOperation; last == nil || last.HydratedSHA != first || last.DrySHA != dry1 {
		t.Errorf("lastSuccessfulOperation after a failure %+v, want the first hydration", last)
	}

	gate.armed.Store(true)
	dry3, err := gs.Commit(ctx, "phases", "greet anew", map[string][]byte{
		"chart/templates/configmap.yaml": []byte(tmpl), "chart/values.yaml": []byte("greeting: hi\n")})
	if err != nil {
		t.Fatal(err)
	}
	hydrating(dry3)
	cur = current("dry commit 3 hydrated", func(cur *v1alpha1.HydrateOperation) bool {
		return cur.Phase == v1alpha1.HydrateOperationPhaseHydrated && cur.DrySHA == dry3
	})
	if cur.Message != "" || cur.HydratedSHA == "" || cur.HydratedSHA == first {
		t.Errorf("currentOperation after the fix %+v, want Hydrated in a new commit, no message", cur)
	}
	if last := got.Status.SourceHydrator.LastSuccessfulOperation; last == nil || last.HydratedSHA != cur.HydratedSHA || last.DrySHA != dry3 {
		t.Errorf("lastSuccessfulOperation %+v, want dry commit 3's", last)
	}
}
