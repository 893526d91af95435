package sync

import (
	"context"
	"testing"
	"time"

	"github.com/kubegitops/gitops/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// listManaged answers ManagedObjects from the ConfigMaps and Deployments of
// one namespace, as the engine's cache index would.
func listManaged(t *testing.T, ns string) func(context.Context, string) ([]*unstructured.Unstructured, error) {
	d := dyn(t)
	tr := resource.DefaultTracking()
	return func(ctx context.Context, app string) ([]*unstructured.Unstructured, error) {
		var out []*unstructured.Unstructured
		for _, gvr := range []schema.GroupVersionResource{gvrConfigMaps, gvrDeployments} {
			l, err := d.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, err
			}
			for i := range l.Items {
				if tr.OwnedBy(&l.Items[i], app) {
					out = append(out, &l.Items[i])
				}
			}
		}
		return out, nil
	}
}

func TestDeleteApplication(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	s, _ := newSyncer(t, func(o *syncerSetup) { o.ManagedObjects = listManaged(t, ns) })
	ctx := context.Background()
	objs := `apiVersion: v1
kind: ConfigMap
metadata: {name: plain}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: unprunable, annotations: {argocd.argoproj.io/sync-options: Prune=false}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: kept, annotations: {argocd.argoproj.io/sync-options: Delete=false}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 0
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx:1.27}]}
`
	res, err := s.Sync(ctx, Request{App: "doomed", Desired: decode(t, ns, objs), Namespace: ns})
	mustSucceed(t, res, err)
	other, _ := newSyncer(t, nil)
	res, err = other.Sync(ctx, Request{App: "bystander", Desired: decode(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: theirs}\n"), Namespace: ns})
	mustSucceed(t, res, err)

	// A dry run deletes nothing.
	dr, err := s.Delete(ctx, DeleteRequest{App: "doomed", DryRun: true})
	if err != nil || len(dr.Deleted) != 3 {
		t.Fatalf("dry run: %+v, %v", dr, err)
	}
	if _, ok := get(t, gvrConfigMaps, ns, "plain"); !ok {
		t.Fatal("dry run deleted an object")
	}

	var last DeleteResult
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		r, err := s.Delete(ctx, DeleteRequest{App: "doomed"})
		last = r
		return r.Done(), err
	})
	if err != nil {
		t.Fatalf("delete never finished: %v (last %+v)", err, last)
	}
	for _, name := range []string{"plain", "unprunable"} {
		if _, ok := get(t, gvrConfigMaps, ns, name); ok {
			t.Errorf("ConfigMap %s survived the app's deletion", name)
		}
	}
	if _, ok := get(t, gvrDeployments, ns, "web"); ok {
		t.Error("Deployment web survived the app's deletion")
	}
	if _, ok := get(t, gvrConfigMaps, ns, "kept"); !ok {
		t.Error("Delete=false object was deleted")
	}
	if len(last.Kept) != 1 || last.Kept[0].Name != "kept" {
		t.Errorf("kept %v, want the Delete=false ConfigMap", last.Kept)
	}
	if _, ok := get(t, gvrConfigMaps, ns, "theirs"); !ok {
		t.Error("another app's object was deleted")
	}
}

func TestDeleteNeedsManagedObjects(t *testing.T) {
	t.Parallel()
	s, _ := newSyncer(t, nil)
	if _, err := s.Delete(context.Background(), DeleteRequest{App: "x"}); err == nil {
		t.Fatal("Delete without ManagedObjects did not fail")
	}
}
