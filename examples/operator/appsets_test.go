package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
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
