package engine

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kubegitops/gitops/resource"
)

// LiveObject returns the whole live object key of app's resource tree: an
// object the app tracks or one of their descendants as ResourceTree finds
// them (a Deployment's ReplicaSets and Pods, a Service's Endpoints). The
// cluster cache keeps tracked objects whole and of the others only their
// metadata (and the facts the tree shows); so a tracked object comes from
// the cache, and a descendant is read from the API server, with the
// engine's credentials for the cluster. The answer is the caller's to
// modify. Errors name the object; a key outside the tree wraps ErrNotInApp.
func (ops Ops) LiveObject(ctx context.Context, app *Application, key resource.Key) (*unstructured.Unstructured, error) {
	e := ops.e

	wrap := func(err error) error { return fmt.Errorf("application %s: %s: %w", app.Name, key, err) }
	tree, _, err := e.ResourceTree(ctx, app)
	if err != nil {
		return nil, err
	}
	inTree := false
	for _, n := range tree.Nodes {
		r := n.ResourceRef
		if (resource.Key{Group: r.Group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}) == key {
			inTree = true
			break
		}
	}
	if !inTree {
		return nil, wrap(fmt.Errorf("%w %s", ErrNotInApp, app.Name))
	}
	cs, err := e.cluster(ctx, app.Spec.Destination)
	if err != nil {
		return nil, wrap(err)
	}
	cached, ok := cs.Cache().Get(key)
	if !ok {
		return nil, wrap(fmt.Errorf("%w %s", ErrNotInApp, app.Name))
	}
	if slices.ContainsFunc(cs.Cache().Managed(e.instanceOf(app)), func(o *unstructured.Unstructured) bool { return resource.KeyOf(o) == key }) {
		return cached.DeepCopy(), nil // tracked: kept whole
	}
	gvr, namespaced, err := resourceOf(cs, cached.GroupVersionKind())
	if err != nil {
		return nil, wrap(err)
	}
	client, err := dynamic.NewForConfig(e.clusters.ClientConfig(cs))
	if err != nil {
		return nil, wrap(err)
	}
	ri := client.Resource(gvr).Namespace(key.Namespace)
	if !namespaced {
		ri = client.Resource(gvr).Namespace("")
	}
	obj, err := ri.Get(ctx, key.Name, metav1.GetOptions{})
	if err != nil {
		return nil, wrap(err)
	}
	return obj, nil
}
