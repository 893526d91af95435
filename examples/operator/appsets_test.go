package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	"sigs.k8s.io/yaml"
)

// checkServesApplicationSets is the part of TestRunReconcilesApplications
// (one run per process: controller names are unique) that shows the
// operator, as its command line runs it, installs the ApplicationSet CRD
// and serves sets in its namespace: a set's generated Application is
// created, owned by the set, and deployed to dest.
func checkServesApplicationSets(ctx context.Context, t *testing.T, ns, dest string) {
	t.Helper()
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "app", "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-set}\ndata: {a: b}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cluster.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	set := &v1alpha1.ApplicationSet{}
	if err := yaml.UnmarshalStrict([]byte(fmt.Sprintf(`
metadata: {name: hello-set}
spec:
  generators:
  - list: {elements: [{name: hello}]}
  template:
    metadata: {name: '{{name}}-from-set'}
    spec:
      project: default
      source: {repoURL: 'file://%s', path: app}
      destination: {name: in-cluster, namespace: %s}
      syncPolicy: {automated: {}}
`, repo, dest)), set); err != nil {
		t.Fatal(err)
	}
	set.Namespace = ns
	if err := c.Create(ctx, set); err != nil {
		t.Fatalf("create ApplicationSet: %v", err)
	}
	app := &v1alpha1.Application{}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "hello-from-set"}, app); err != nil {
			return false, nil
		}
		return app.Status.Sync.Status == "Synced" && app.Status.Health.Status == "Healthy", nil
	})
	if err != nil {
		t.Fatalf("the set's Application not Synced and Healthy: %v; status %+v", err, app.Status)
	}
	if ref := metav1.GetControllerOf(app); ref == nil || ref.Kind != "ApplicationSet" || ref.Name != "hello-set" {
		t.Fatalf("the Application is not the set's: %+v", app.OwnerReferences)
	}
}

// TestAppSetsFlag: ApplicationSets are served unless -applicationsets=false.
func TestAppSetsFlag(t *testing.T) {
	f, err := parseFlags([]string{"-applicationsets=false"})
	if err != nil || f.appSets {
		t.Fatalf("-applicationsets=false: %+v, %v", f, err)
	}
	if f, _ := parseFlags(nil); !f.appSets {
		t.Fatal("ApplicationSets are not served by default")
	}
}

// TestClusterGeneratorSeesDeclarativeClusters: the operator's clusters
// generator sees every cluster Argo CD's would. A declarative cluster
// Secret added after the set generated gets its Application at once (the
// Secret's change requeues the set), deployed to that cluster, with the
// Secret's project; the set says it generated everything. A cluster Secret
// that cannot be read makes the set say so (ParametersGenerated False,
// naming the Secret), never "Successfully generated parameters for all
// Applications", and the Applications it has stay.
func TestClusterGeneratorSeesDeclarativeClusters(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	remote, err := testenv.Start(ctx, testenv.Options{APIServerOnly: true, Users: []testenv.User{{Name: "deployer"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = remote.Stop() })
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	local, err := client.New(cluster.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := client.New(remote.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Create(ctx, adminBinding("deployer")); err != nil {
		t.Fatal(err)
	}
	dest := cluster.TestNamespace(t)
	if err := rc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: dest}}); err != nil {
		t.Fatal(err)
	}
	deployer, err := remote.UserConfig("deployer")
	if err != nil {
		t.Fatal(err)
	}
	ns := cluster.TestNamespace(t)
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "app", "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: per-cluster}\ndata: {a: b}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		// A long interval: only the Secret's event can bring the set back
		// in time.
		done <- run(ctx, []string{"-kubeconfig", cluster.Kubeconfig(), "-namespace", ns, "-interval", "10m",
			"-metrics-bind-address", "0", "-health-probe-bind-address", "0"})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("run: %v", err)
		}
	}()
	poll := func(what string, cond func(ctx context.Context) (bool, error)) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			select {
			case err := <-done:
				return false, errors.Join(errors.New("run ended"), err)
			default:
			}
			return cond(ctx)
		})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	set := &v1alpha1.ApplicationSet{}
	if err := yaml.UnmarshalStrict([]byte(fmt.Sprintf(`
metadata: {name: per-cluster}
spec:
  goTemplate: true
  generators:
  - clusters:
      selector: {matchLabels: {env: remote}}
  template:
    metadata: {name: '{{.name}}-app', labels: {cluster-project: '{{.project}}'}}
    spec:
      project: default
      source: {repoURL: 'file://%s', path: app}
      destination: {server: '{{.server}}', namespace: %s}
      syncPolicy: {automated: {}}
`, repo, dest)), set); err != nil {
		t.Fatal(err)
	}
	set.Namespace = ns
	poll("create the ApplicationSet", func(ctx context.Context) (bool, error) { return local.Create(ctx, set.DeepCopy()) == nil, nil })
	condition := func(typ string) v1alpha1.ApplicationSetCondition {
		got := &v1alpha1.ApplicationSet{}
		_ = local.Get(ctx, types.NamespacedName{Namespace: ns, Name: "per-cluster"}, got)
		for _, c := range got.Status.Conditions {
			if c.Type == typ {
				return c
			}
		}
		return v1alpha1.ApplicationSetCondition{}
	}
	poll("the set generated (no cluster yet)", func(context.Context) (bool, error) {
		return condition("ParametersGenerated").Status == "True", nil
	})

	sec := clusterSecret(ns, "remote-cluster", "remote", deployer)
	sec.Labels["env"] = "remote"
	sec.StringData["project"] = "default"
	if err := local.Create(ctx, sec); err != nil {
		t.Fatal(err)
	}
	app := &v1alpha1.Application{}
	poll("the remote cluster's Application Synced and Healthy", func(ctx context.Context) (bool, error) {
		if err := local.Get(ctx, types.NamespacedName{Namespace: ns, Name: "remote-app"}, app); err != nil {
			return false, nil
		}
		return app.Status.Sync.Status == "Synced" && app.Status.Health.Status == "Healthy", nil
	})
	if app.Spec.Destination.Server != deployer.Host || app.Labels["cluster-project"] != "default" {
		t.Fatalf("generated Application: destination %+v, labels %v", app.Spec.Destination, app.Labels)
	}
	poll("ConfigMap on the remote cluster", func(ctx context.Context) (bool, error) {
		return rc.Get(ctx, types.NamespacedName{Namespace: dest, Name: "per-cluster"}, &corev1.ConfigMap{}) == nil, nil
	})
	if c := condition("ParametersGenerated"); c.Status != "True" || c.Message != "Successfully generated parameters for all Applications" {
		t.Fatalf("ParametersGenerated = %+v", c)
	}

	broken := clusterSecret(ns, "broken-cluster", "broken", deployer)
	broken.Labels["env"] = "remote"
	broken.StringData["config"] = `{"awsAuthConfig":{"clusterName":"c","roleARN":"arn:aws:iam::1:role/r"}}`
	if err := local.Create(ctx, broken); err != nil {
		t.Fatal(err)
	}
	poll("the set says a cluster is missing", func(context.Context) (bool, error) {
		c := condition("ParametersGenerated")
		return c.Status == "False" && strings.Contains(c.Message, ns+"/broken-cluster"), nil
	})
	if c := condition("ErrorOccurred"); c.Status != "True" || strings.Contains(c.Message, "Successfully generated") {
		t.Fatalf("ErrorOccurred = %+v", c)
	}
	if err := local.Get(ctx, types.NamespacedName{Namespace: ns, Name: "remote-app"}, app); err != nil || app.DeletionTimestamp != nil {
		t.Fatalf("the remote cluster's Application did not stay: %v", err)
	}
}
