package diff

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/kubegitops/gitops/resource"
)

// DryRunApplier runs a server-side apply dry run: it returns the object the
// API server would store if obj were applied by fieldManager, with
// managedFields, defaults and admission (webhook) changes included, and
// writes nothing.
type DryRunApplier interface {
	DryRunApply(ctx context.Context, obj *unstructured.Unstructured, fieldManager string) (*unstructured.Unstructured, error)
}

// ClusterDryRunApplier is the DryRunApplier of a real cluster: a dynamic
// client and a discovery-backed REST mapper (refreshed once when a kind is
// not found, for CRDs created after start).
type ClusterDryRunApplier struct {
	client  dynamic.Interface
	mapper  *restmapper.DeferredDiscoveryRESTMapper
	timeout time.Duration
}

// NewDryRunApplier returns a ClusterDryRunApplier for cfg. Each dry run is
// bounded by timeout (default 30 s when zero).
func NewDryRunApplier(cfg *rest.Config, timeout time.Duration) (*ClusterDryRunApplier, error) {
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("diff: discovery client: %w", err)
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("diff: dynamic client: %w", err)
	}
	return &ClusterDryRunApplier{
		client:  client,
		mapper:  restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)),
		timeout: timeout,
	}, nil
}

// DryRunApply implements DryRunApplier with a forced server-side apply
// (dryRun=All), as sync would apply.
func (a *ClusterDryRunApplier) DryRunApply(ctx context.Context, obj *unstructured.Unstructured, fieldManager string) (*unstructured.Unstructured, error) {
	gvk := obj.GroupVersionKind()
	mapping, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		a.mapper.Reset()
		if mapping, err = a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			return nil, fmt.Errorf("no API resource for %s: %w", gvk, err)
		}
	}
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	var ri dynamic.ResourceInterface = a.client.Resource(mapping.Resource)
	if mapping.Scope.Name() == "namespace" {
		ri = a.client.Resource(mapping.Resource).Namespace(obj.GetNamespace())
	}
	force := true
	return ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{
		DryRun:       []string{metav1.DryRunAll},
		FieldManager: fieldManager,
		Force:        &force,
	})
}

// serverSideCacheKey is (desired hash, live resourceVersion): a dry run
// depends on nothing else that the diff can see.
func serverSideCacheKey(applied map[string]any, live *unstructured.Unstructured, manager string) (string, bool) {
	if live == nil || live.GetResourceVersion() == "" {
		return "", false
	}
	data, err := json.Marshal(applied)
	if err != nil {
		return "", false
	}
	h := sha256.New()
	h.Write(data)
	h.Write([]byte{0})
	h.Write([]byte(manager))
	return hex.EncodeToString(h.Sum(nil)) + "/" + string(live.GetUID()) + "/" + live.GetResourceVersion(), true
}

// objectForApply is what a server-side apply sends: desired as written
// (Secrets with their real values, stringData unfolded: the server folds
// it), minus server-owned metadata and status.
func objectForApply(desired *unstructured.Unstructured, namespace string) map[string]any {
	obj := deepCopyMap(desired.Object)
	if meta, ok := obj["metadata"].(map[string]any); ok {
		for _, f := range serverMetadata {
			delete(meta, f)
		}
		if ns, _ := meta["namespace"].(string); ns == "" && namespace != "" {
			meta["namespace"] = namespace
		}
	}
	delete(obj, "status")
	return obj
}

// predictServerSide runs (or reuses) the dry run and returns the predicted
// object, normalised. Unless mutation webhooks are included, fields whose
// value the dry run changed but which our manager does not own in the
// result take their live values: a webhook or a default, not our change.
func (d *Differ) predictServerSide(ctx context.Context, gvk schema.GroupVersionKind, desired, liveRaw *unstructured.Unstructured, live map[string]any, includeWebhook bool) (map[string]any, error) {
	if d.opts.DryRun == nil {
		return nil, fmt.Errorf("server-side diff needs Options.DryRun")
	}
	applied := objectForApply(desired, liveRaw.GetNamespace())
	key, cacheable := serverSideCacheKey(applied, liveRaw, d.opts.FieldManager)
	var result *unstructured.Unstructured
	if cacheable && d.ssdCache != nil {
		if cached, ok := d.ssdCache.Get(key); ok {
			result = cached.DeepCopy()
			d.opts.Logger.V(2).Info("server-side diff: cached dry run", "object", resource.KeyOf(liveRaw).String())
		}
	}
	if result == nil {
		d.opts.Logger.V(1).Info("server-side diff: dry run", "object", resource.KeyOf(liveRaw).String(), "fieldManager", d.opts.FieldManager)
		r, err := d.opts.DryRun.DryRunApply(ctx, &unstructured.Unstructured{Object: applied}, d.opts.FieldManager)
		if err != nil {
			return nil, fmt.Errorf("server-side apply dry run: %w", err)
		}
		result = r
		if cacheable && d.ssdCache != nil {
			d.ssdCache.Add(key, r.DeepCopy())
		}
	}
	ours := &fieldpath.Set{}
	for _, e := range result.GetManagedFields() {
		if e.Manager == d.opts.FieldManager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" && e.FieldsV1 != nil {
			s, err := fieldsOf(e)
			if err != nil {
				return nil, fmt.Errorf("server-side apply dry run: %w", err)
			}
			ours = ours.Union(s)
		}
	}
	predicted := deepCopyMap(result.Object)
	d.norm.normalize(predicted)
	if includeWebhook || live == nil {
		return predicted, nil
	}
	return d.revertUnowned(ctx, gvk, predicted, live, ours)
}

// revertUnowned gives every field that differs between live and predicted,
// and that our manager does not own, its live value.
func (d *Differ) revertUnowned(ctx context.Context, gvk schema.GroupVersionKind, predicted, live map[string]any, ours *fieldpath.Set) (map[string]any, error) {
	var out map[string]any
	_, _, err := d.withModel(ctx, gvk, func(tc managedfields.TypeConverter) error {
		var err error
		out, err = revertUnownedWith(tc, predicted, live, ours)
		return err
	})
	return out, err
}

func revertUnownedWith(tc managedfields.TypeConverter, predicted, live map[string]any, ours *fieldpath.Set) (map[string]any, error) {
	tvPred, err := toTyped(tc, predicted)
	if err != nil {
		return nil, fmt.Errorf("server-side diff: predicted: %w", err)
	}
	tvLive, err := toTyped(tc, live)
	if err != nil {
		return nil, fmt.Errorf("server-side diff: live: %w", err)
	}
	cmp, err := tvLive.Compare(tvPred)
	if err != nil {
		return nil, fmt.Errorf("server-side diff: %w", err)
	}
	changed := cmp.Added.Union(cmp.Modified)
	notOurs := changed.Difference(ours)
	// A field inside a subtree we own (an item we added) is ours too.
	notOurs = notOurs.Difference(changedUnder(notOurs, ours))
	if notOurs.Empty() {
		return predicted, nil
	}
	reverted := tvPred.RemoveItems(notOurs)
	back := tvLive.ExtractItems(cmp.Modified.Intersection(notOurs), typed.WithAppendKeyFields())
	merged, err := reverted.Merge(back)
	if err != nil {
		return nil, &modelError{fmt.Errorf("server-side diff: %w", err)}
	}
	out, ok := merged.AsValue().Unstructured().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("server-side diff: result is not an object")
	}
	return deepCopyMap(out), nil
}

// changedUnder returns the members of set that lie under a path of owned
// that is not a leaf we own but an item or map we own whole (its key
// fields are in owned): defaults the server fills into an item we added.
func changedUnder(set, owned *fieldpath.Set) *fieldpath.Set {
	out := &fieldpath.Set{}
	set.Iterate(func(p fieldpath.Path) {
		for i := len(p) - 1; i > 0; i-- {
			if p[i-1].Key != nil && owned.Has(p[:i]) {
				out.Insert(p)
				return
			}
		}
	})
	return out
}
