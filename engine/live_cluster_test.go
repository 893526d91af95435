package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
)

// TestLiveObjectOfTreeNodes: LiveObject answers the whole object (spec,
// status, creation time) for an object the app tracks and for its
// descendants, which the cache keeps lean (a Pod, its ReplicaSet, the
// Service's endpoints), and refuses a key outside the app's tree with
// ErrNotInApp.
func TestLiveObjectOfTreeNodes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	e := newEngine(t, func(o *Options) { o.Sync.WaitFinalWave = false })
	app := dirApp(ns, repoDir(t, map[string]string{"app/web.yaml": treeManifests}), ns)
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v %s", err, res.Summary())
	}
	byKind := map[string]resource.Key{}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		tree, _, err := e.ResourceTree(ctx, app)
		if err != nil {
			return false, err
		}
		for _, n := range tree.Nodes {
			byKind[n.Kind] = resource.Key{Group: n.Group, Kind: n.Kind, Namespace: n.Namespace, Name: n.Name}
		}
		_, pod := byKind["Pod"]
		_, eps := byKind["EndpointSlice"]
		return pod && eps, nil
	})
	if err != nil {
		t.Fatalf("waiting for a Pod and an EndpointSlice in the tree: %v (%v)", err, byKind)
	}
	for _, kind := range []string{"Deployment", "ReplicaSet", "Pod", "EndpointSlice"} {
		obj, err := e.LiveObject(ctx, app, byKind[kind])
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if obj.GetCreationTimestamp().Time.IsZero() || resource.KeyOf(obj) != byKind[kind] {
			t.Errorf("%s: not the whole object: %v", kind, obj.Object)
		}
		field := "spec"
		if kind == "EndpointSlice" {
			field = "addressType"
		}
		if _, ok := obj.Object[field]; !ok {
			t.Errorf("%s: no %s: %v", kind, field, obj.Object)
		}
		if kind == "Pod" {
			if phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase"); phase == "" {
				t.Errorf("Pod: no status.phase: %v", obj.Object)
			}
		}
	}
	outside := resource.Key{Kind: "ConfigMap", Namespace: ns, Name: "kube-root-ca.crt"}
	if _, err := e.LiveObject(ctx, app, outside); !errors.Is(err, ErrNotInApp) {
		t.Errorf("a ConfigMap outside the tree: %v, want ErrNotInApp", err)
	}
}
