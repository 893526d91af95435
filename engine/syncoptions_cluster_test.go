package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestFailOnSharedResource: an app whose object another app already
// manages fails its sync before any write, naming the object and the
// other app; without the option it is a warning only.
func TestFailOnSharedResource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	e := newEngine(t, nil)
	shared := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared}\ndata: {k: v}\n"
	first := dirApp(ns+"-first", repoDir(t, map[string]string{"app/cm.yaml": shared}), ns)
	if res, err := e.Sync(ctx, first, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("first app: %s %v", res.Phase, err)
	}
	second := dirApp(ns+"-second", repoDir(t, map[string]string{"app/cm.yaml": shared, "app/own.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: own}\n"}), ns)
	second.Spec.SyncPolicy = &SyncPolicy{SyncOptions: []string{"FailOnSharedResource=true"}}
	refreshUntil(t, e, second, "the shared object seen", func(st appstatus.Status) bool {
		for _, c := range st.Conditions {
			if c.Type == appstatus.ConditionSharedResource {
				return true
			}
		}
		return false
	})
	res, err := e.Sync(ctx, second, SyncRequest{})
	var se *SharedResourceError
	if !errors.As(err, &se) || se.Owners[resource.Key{Kind: "ConfigMap", Namespace: ns, Name: "shared"}] != first.Name || res.Phase == sync.Succeeded {
		t.Fatalf("got %s %v, want a SharedResourceError naming ConfigMap shared and %s", res.Phase, err, first.Name)
	}
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "own", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the refused sync wrote its other object (get: %v)", err)
	}
	if op, _ := e.LastOperation(ctx, v1alpha1.KeyOf(second)); op == nil || op.Phase != sync.Failed {
		t.Fatalf("last operation %+v", op)
	}
}

// TestManagedNamespaceMetadata: with CreateNamespace=true the created
// namespace carries managedNamespaceMetadata, kept in step when it
// changes (a removed label goes, others' labels stay), and a sync with
// nothing new writes nothing to the namespace.
func TestManagedNamespaceMetadata(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := cluster.TestNamespace(t)
	ns := base + "-managed"
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	e := newEngine(t, nil)
	app := dirApp(ns, repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"}), ns)
	app.Spec.SyncPolicy = &SyncPolicy{SyncOptions: []string{"CreateNamespace=true"},
		ManagedNamespaceMetadata: &ManagedNamespaceMetadata{Labels: map[string]string{"team": "a", "tier": "web"}, Annotations: map[string]string{"owner": "ops"}}}
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %s %v", res.Phase, err)
	}
	got, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil || got.Labels["team"] != "a" || got.Labels["tier"] != "web" || got.Annotations["owner"] != "ops" {
		t.Fatalf("namespace metadata %v %v (%v)", got.Labels, got.Annotations, err)
	}
	// Someone else labels the namespace; then the app drops "tier" and
	// changes "team".
	got.Labels["other"] = "kept"
	if _, err := cs.CoreV1().Namespaces().Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	app.Spec.SyncPolicy.ManagedNamespaceMetadata = &ManagedNamespaceMetadata{Labels: map[string]string{"team": "b"}}
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("second sync: %s %v", res.Phase, err)
	}
	got, _ = cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if got.Labels["team"] != "b" || got.Labels["tier"] != "" || got.Annotations["owner"] != "" || got.Labels["other"] != "kept" {
		t.Fatalf("after the change: labels %v annotations %v", got.Labels, got.Annotations)
	}
	rv := got.ResourceVersion
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("third sync: %s %v", res.Phase, err)
	}
	if got, _ = cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); got.ResourceVersion != rv {
		t.Fatal("a sync with nothing new wrote to the namespace")
	}
}
