package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/testenv"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var cluster *testenv.Cluster

func TestMain(m *testing.M) {
	// No controllers are needed: the app is a ConfigMap.
	os.Exit(testenv.RunMain(m, testenv.Options{APIServerOnly: true}, &cluster))
}

// TestRunReconcilesApplications runs the operator as its command line
// does: it installs the CRDs, an Application created in its namespace
// is synced and reported, ApplicationSets are served, and the
// AppProjects of its namespace decide which Applications of another
// namespace (-application-namespaces) may run.
func TestRunReconcilesApplications(t *testing.T) {
	ns := cluster.TestNamespace(t)
	dest := cluster.TestNamespace(t)
	team := cluster.TestNamespace(t)
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "app", "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello}\ndata: {a: b}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-kubeconfig", cluster.Kubeconfig(), "-namespace", ns, "-interval", "1m",
			"-metrics-bind-address", "0", "-health-probe-bind-address", "0", "-application-namespaces", team})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("run: %v", err)
		}
	}()

	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cluster.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"}, Spec: v1alpha1.ApplicationSpec{
		Project:     "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: "file://" + repo, Path: "app"},
		Destination: v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: dest},
		SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
	}}
	// The CRD is installed by run: create once it is served.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-done:
			return false, errors.Join(errors.New("run ended"), err)
		default:
		}
		return c.Create(ctx, app.DeepCopy()) == nil, nil
	})
	if err != nil {
		t.Fatalf("create Application: %v", err)
	}
	got := &v1alpha1.Application{}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "hello"}, got); err != nil {
			return false, nil
		}
		return got.Status.Sync.Status == "Synced" && got.Status.Health.Status == "Healthy", nil
	})
	if err != nil {
		t.Fatalf("Application not Synced and Healthy: %v; status %+v", err, got.Status)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: dest, Name: "hello"}, cm); err != nil || cm.Data["a"] != "b" {
		t.Errorf("ConfigMap: %v %v", cm.Data, err)
	}
	checkServesApplicationSets(ctx, t, ns, dest)
	checkServesAppProjects(ctx, t, c, ns, team, "file://"+repo)
}

func TestFlags(t *testing.T) {
	if _, err := parseFlags([]string{"-namespace", ""}); err == nil {
		t.Error("an empty namespace was accepted")
	}
	f, err := parseFlags([]string{"-namespace", "ops", "-interval", "30s", "-workers", "2"})
	if err != nil || f.namespace != "ops" || f.interval != 30*time.Second || f.workers != 2 || !f.installCRD {
		t.Errorf("flags %+v, err %v", f, err)
	}
}
