package engine

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/resource"
)

// treeSource is what ResourceTree needs of a cluster cache beyond
// ClusterCache: the ownership edges and the facts the populate hook
// attached. *cache.ClusterCache has both; with a cache that lacks them the
// tree holds the app's own objects alone.
type treeSource interface {
	Children(key resource.Key) []resource.Key
	Info(key resource.Key) (any, bool)
}

// ResourceTree returns the live tree of app from its destination's
// cluster cache, with the summary Argo CD derives from it:
//
//   - the nodes are the objects the app tracks (sorted by key), then their
//     descendants, breadth first, found by owner references and the
//     cache's inferred parents (Deployment -> ReplicaSet -> Pod, Service ->
//     EndpointSlice, StatefulSet -> PersistentVolumeClaim); each names its
//     parents in the tree, its health when a check has an opinion, the
//     images of a Pod or workload, and its creation time; the tree is
//     bounded by v1alpha1.NewApplicationTree;
//   - the summary's externalURLs come from Ingress rules (https for a host
//     of the Ingress's TLS hosts), LoadBalancer Services' ingress points
//     and link.argocd.argoproj.io/* annotations, its images from the
//     nodes; both sorted, without duplicates.
//
// A node never holds the object's resourceVersion nor a health transition
// time: the tree changes only when an object comes or goes, or its owners,
// images or health change, so a status holding it is not rewritten
// because a Pod's status moved. The descendants' facts are gathered by the
// engine's populate hook as the cache sees them change (a lean cached
// object keeps them beside its metadata), unless a populate hook of
// Options.Cache attaches a value of its own.
func (ops Ops) ResourceTree(ctx context.Context, app *Application) (*v1alpha1.ApplicationTree, v1alpha1.ApplicationSummary, error) {
	e := ops.e

	cs, err := e.cluster(ctx, app.Spec.Destination)
	if err != nil {
		return nil, v1alpha1.ApplicationSummary{}, fmt.Errorf("application %s/%s: resource tree: %w", app.Namespace, app.Name, err)
	}
	w := treeWalk{ctx: ctx, checker: e.health, cache: cs.Cache(), index: map[resource.Key]int{}}
	w.src, _ = cs.Cache().(treeSource)
	for _, obj := range cs.Cache().Managed(e.instanceOf(app)) {
		w.add(resource.KeyOf(obj), obj)
	}
	if w.src != nil {
		for i := 0; i < len(w.keys); i++ {
			parent := w.nodes[i].ResourceRef
			for _, k := range w.src.Children(w.keys[i]) {
				j, seen := w.index[k]
				if !seen {
					obj, ok := cs.Cache().Get(k)
					if !ok {
						continue
					}
					j = w.add(k, obj)
				}
				w.nodes[j].ParentRefs = append(w.nodes[j].ParentRefs, parent)
			}
		}
	}
	return v1alpha1.NewApplicationTree(w.nodes), w.summary(), nil
}

// treeWalk gathers the nodes of one app's tree.
type treeWalk struct {
	ctx     context.Context
	checker health.Checker
	cache   ClusterCache
	src     treeSource
	index   map[resource.Key]int
	keys    []resource.Key
	nodes   []v1alpha1.ResourceNode
	urls    []string
}

// add appends the node of the cached object obj and returns its index.
func (w *treeWalk) add(k resource.Key, obj *unstructured.Unstructured) int {
	gv, _ := schema.ParseGroupVersion(obj.GetAPIVersion())
	n := v1alpha1.ResourceNode{ResourceRef: v1alpha1.ResourceRef{Group: k.Group, Version: gv.Version, Kind: k.Kind,
		Namespace: k.Namespace, Name: k.Name, UID: string(obj.GetUID())}}
	f := w.factsOf(k, obj)
	n.Images = f.Images
	if f.Health != nil {
		n.Health = &v1alpha1.HealthStatus{Status: string(f.Health.Code), Message: f.Health.Message}
	}
	if !f.CreatedAt.IsZero() {
		t := metav1.NewTime(f.CreatedAt)
		n.CreatedAt = &t
	}
	w.urls = append(w.urls, f.URLs...)
	w.index[k] = len(w.nodes)
	w.keys = append(w.keys, k)
	w.nodes = append(w.nodes, n)
	return len(w.nodes) - 1
}

// factsOf returns the facts of a cached object: judged now for a whole
// object (every object the app tracks is kept whole), else those the
// populate hook attached to a lean one.
func (w *treeWalk) factsOf(k resource.Key, obj *unstructured.Unstructured) nodeFacts {
	if !cache.IsLean(obj) {
		f := describeNode(obj)
		if hs, err := health.CheckContext(w.ctx, w.checker, obj); err == nil {
			f.Health = hs
		}
		return f
	}
	if w.src != nil {
		if info, ok := w.src.Info(k); ok {
			if f, ok := info.(*nodeFacts); ok {
				return *f
			}
		}
	}
	return nodeFacts{}
}

// summary is the app's external URLs and images, sorted and deduplicated.
func (w *treeWalk) summary() v1alpha1.ApplicationSummary {
	var images []string
	for _, n := range w.nodes {
		images = append(images, n.Images...)
	}
	return v1alpha1.ApplicationSummary{ExternalURLs: sortedSet(w.urls), Images: sortedSet(images)}
}

// withNodeFacts wraps a populate hook so that a lean object that may be a
// node of some app's tree (it has owners, or a parent the cache infers)
// carries its nodeFacts, health judged by checker; a whole object, and one
// the wrapped hook gives a value of its own, are left as they are.
func withNodeFacts(next cache.PopulateFunc, checker health.Checker) cache.PopulateFunc {
	return func(obj *unstructured.Unstructured, app string) (any, bool) {
		info, whole := next(obj, app)
		if whole || info != nil || !mayBeDescendant(obj) {
			return info, whole
		}
		f := describeNode(obj)
		// The hook has no context (it runs in the cache's watch
		// goroutines); a check that fails leaves the health unjudged.
		if hs, err := checker.Check(obj); err == nil {
			f.Health = hs
		}
		return &f, false
	}
}

// mayBeDescendant reports an object with owners, or one the cache may
// give a parent without them (Endpoints, PersistentVolumeClaims).
func mayBeDescendant(obj *unstructured.Unstructured) bool {
	if len(obj.GetOwnerReferences()) > 0 {
		return true
	}
	gk := obj.GroupVersionKind().GroupKind()
	return gk.Group == "" && (gk.Kind == "Endpoints" || gk.Kind == "PersistentVolumeClaim") ||
		gk == schema.GroupKind{Group: "discovery.k8s.io", Kind: "EndpointSlice"}
}
