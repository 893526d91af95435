package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/argocdcm"
	"github.com/kubegitops/gitops/examples/operator/controller"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// startOperatorWithApp runs the operator on namespace ns until the test ends and
// returns a client, with an Application of repo's folder app (automated
// sync into dest) created once the CRD is served.
func startOperatorWithApp(t *testing.T, ns, dest, repo string) client.Client {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-kubeconfig", cluster.Kubeconfig(), "-namespace", ns, "-interval", "1m",
			"-metrics-bind-address", "0", "-health-probe-bind-address", "0"})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("run: %v", err)
		}
	})
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cluster.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"}, Spec: v1alpha1.ApplicationSpec{
		Project:     "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: "file://" + repo, Path: "app"},
		Destination: v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: dest},
		SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
	}}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return c.Create(ctx, app.DeepCopy()) == nil, nil
	})
	if err != nil {
		t.Fatalf("create Application: %v", err)
	}
	return c
}

// writeRepo writes the files of folder app of a new repository.
func writeRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(repo, "app", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return repo
}

// waitApp waits until ok holds of the Application ns/app.
func waitApp(t *testing.T, c client.Client, ns string, what string, ok func(*v1alpha1.Application) bool) {
	t.Helper()
	got := &v1alpha1.Application{}
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "app"}, got); err != nil {
			return false, nil
		}
		return ok(got), nil
	})
	if err != nil {
		t.Fatalf("Application not %s: %v; status %+v", what, err, got.Status)
	}
}

// TestSettingsConfigMaps: argocd-cm and argocd-cmd-params-cm of the
// operator's namespace are read at start (controller.status.processors
// sets the reconciler's workers; an unknown key and a malformed one are
// reported by name as Events on the ConfigMap while the rest applies), and
// a health script added later changes the app's health without a restart.
func TestSettingsConfigMaps(t *testing.T) {
	ns, dest := cluster.TestNamespace(t), cluster.TestNamespace(t)
	ctx := context.Background()
	kc, err := client.New(cluster.Config(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	argocdCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "argocd-cm"},
		Data: map[string]string{"no.such.key": "x", "timeout.reconciliation": "soon"}}
	params := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "argocd-cmd-params-cm"},
		Data: map[string]string{"controller.status.processors": "3"}}
	for _, o := range []client.Object{argocdCM, params} {
		if err := kc.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	repo := writeRepo(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello}\ndata: {a: b}\n"})
	c := startOperatorWithApp(t, ns, dest, repo)
	waitApp(t, c, ns, "Synced and Healthy", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == "Synced" && a.Status.Health.Status == "Healthy"
	})
	if n := maxReconciles(t); n != 3 {
		t.Errorf("application controller workers %v, want 3 (controller.status.processors)", n)
	}
	// Each bad key is an Event on argocd-cm naming it.
	var notes []string
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var list corev1.EventList
		if err := kc.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, nil
		}
		notes = notes[:0]
		for _, e := range list.Items {
			if e.InvolvedObject.Name == "argocd-cm" && e.InvolvedObject.Kind == "ConfigMap" {
				notes = append(notes, e.Reason+": "+e.Message)
			}
		}
		all := strings.Join(notes, "\n")
		return strings.Contains(all, "UnusedSetting: argocd-cm: not an Argo CD setting this program knows: no.such.key") &&
			strings.Contains(all, "InvalidSetting: argocd-cm: left out, the rest applies: timeout.reconciliation: malformed value"), nil
	})
	if err != nil {
		t.Fatalf("events of argocd-cm: %q", notes)
	}
	// A health script added now judges the app's ConfigMap Degraded.
	if err := kc.Get(ctx, client.ObjectKeyFromObject(argocdCM), argocdCM); err != nil {
		t.Fatal(err)
	}
	argocdCM.Data["resource.customizations.health.ConfigMap"] = "hs = {}\nhs.status = \"Degraded\"\nhs.message = \"judged by argocd-cm\"\nreturn hs\n"
	if err := kc.Update(ctx, argocdCM); err != nil {
		t.Fatal(err)
	}
	waitApp(t, c, ns, "Degraded by the new script", func(a *v1alpha1.Application) bool {
		return a.Status.Health.Status == "Degraded" && a.Status.Sync.Status == "Synced"
	})
}

// maxReconciles is the application controller's worker count as
// controller-runtime's metric reports it.
func maxReconciles(t *testing.T) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "controller_runtime_max_concurrent_reconciles" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == "application" {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatal("no controller_runtime_max_concurrent_reconciles of the application controller")
	return 0
}

// TestDegradedDeploymentAfterSync: as in Argo CD, a sync whose last wave
// is a Deployment succeeds once it is written, and the Deployment turning
// Degraded afterwards shows in the app's health, not as a failed sync.
func TestDegradedDeploymentAfterSync(t *testing.T) {
	ns, dest := cluster.TestNamespace(t), cluster.TestNamespace(t)
	ctx := context.Background()
	repo := writeRepo(t, map[string]string{"deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  progressDeadlineSeconds: 5
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx:1.27}]}
`})
	c := startOperatorWithApp(t, ns, dest, repo)
	waitApp(t, c, ns, "synced by an operation that Succeeded", func(a *v1alpha1.Application) bool {
		return a.Status.OperationState != nil && a.Status.OperationState.Phase == "Succeeded"
	})
	// No controllers run here: the Deployment's status is what the
	// Deployment controller writes when the rollout misses its deadline.
	kc, err := client.New(cluster.Config(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := &unstructured.Unstructured{Object: map[string]any{}}
	d.SetAPIVersion("apps/v1")
	d.SetKind("Deployment")
	if err := kc.Get(ctx, types.NamespacedName{Namespace: dest, Name: "web"}, d); err != nil {
		t.Fatal(err)
	}
	d.Object["status"] = map[string]any{"observedGeneration": d.GetGeneration(), "replicas": int64(1), "unavailableReplicas": int64(1),
		"conditions": []any{map[string]any{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded", "message": "deadline exceeded"}}}
	if err := kc.Status().Update(ctx, d); err != nil {
		t.Fatal(err)
	}
	waitApp(t, c, ns, "Degraded after a Succeeded sync", func(a *v1alpha1.Application) bool {
		return a.Status.Health.Status == "Degraded" && a.Status.OperationState != nil && a.Status.OperationState.Phase == "Succeeded"
	})
}

// TestReconciliationOff: argocd-cm timeout.reconciliation 0 turns the
// periodic refresh off, as in Argo CD v3 (a negative interval for the
// engine and the reconciler), and timeout.hard.reconciliation still gives
// the reconciler its hard refresh interval; a -interval given on the
// command line wins.
func TestReconciliationOff(t *testing.T) {
	cm, err := parseArgoCDCM(map[string]string{"timeout.reconciliation": "0s", "timeout.hard.reconciliation": "1h"})
	if err != nil {
		t.Fatalf("timeout.reconciliation 0s: %v, want it accepted", err)
	}
	st := &settings{cm: cm, params: &argocdcm.Params{}}
	if f := st.flags(flags{interval: 3 * time.Minute, set: map[string]bool{}}); f.interval >= 0 {
		t.Errorf("interval %s, want negative (periodic refresh off)", f.interval)
	}
	if f := st.flags(flags{interval: time.Minute, set: map[string]bool{"interval": true}}); f.interval != time.Minute {
		t.Errorf("interval %s, want -interval's 1m", f.interval)
	}
	opts := controller.DefaultOptions()
	st.reconcilerOptions(&opts)
	if opts.HardInterval != time.Hour {
		t.Errorf("reconciler hard interval %s, want timeout.hard.reconciliation's 1h", opts.HardInterval)
	}
}

// TestWorkersDefaultIsArgoCDs: without -workers or
// controller.status.processors, the reconciler runs Argo CD's default of
// 20 status processors.
func TestWorkersDefaultIsArgoCDs(t *testing.T) {
	f, err := parseFlags(nil)
	if err != nil || f.workers != 20 {
		t.Fatalf("default workers %d (%v), want 20", f.workers, err)
	}
}
