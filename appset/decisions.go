package appset

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// ClusterDecisions is the DecisionReader of a cluster: it reads the
// ConfigMap and the duck-typed resources of clusterDecisionResource
// generators from Namespace (Argo CD's controller namespace) with a
// dynamic client.
type ClusterDecisions struct {
	client    dynamic.Interface
	mapper    meta.ResettableRESTMapper
	namespace string
}

var _ DecisionReader = (*ClusterDecisions)(nil)

// requestTimeout bounds each request when the rest.Config sets none.
const requestTimeout = 30 * time.Second

// NewClusterDecisions connects to the cluster of cfg (each request bounded
// by cfg.Timeout, 30 s when unset) and reads from namespace.
func NewClusterDecisions(cfg *rest.Config, namespace string) (*ClusterDecisions, error) {
	c := rest.CopyConfig(cfg)
	if c.Timeout == 0 {
		c.Timeout = requestTimeout
	}
	dyn, err := dynamic.NewForConfig(c)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(c)
	if err != nil {
		return nil, err
	}
	return &ClusterDecisions{client: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)), namespace: namespace}, nil
}

// ConfigMap returns the data of a ConfigMap of the namespace.
func (d *ClusterDecisions) ConfigMap(ctx context.Context, name string) (map[string]string, error) {
	obj, err := d.client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(d.namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	data, _, err := unstructured.NestedStringMap(obj.Object, "data")
	return data, err
}

// List returns the namespace's objects of apiVersion and kind: the one
// named name, or those matching selector.
func (d *ClusterDecisions) List(ctx context.Context, apiVersion, kind, name string, selector labels.Selector) ([]*unstructured.Unstructured, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	m, err := d.mapper.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
	if meta.IsNoMatchError(err) {
		d.mapper.Reset() // a CRD installed since the last discovery
		m, err = d.mapper.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", apiVersion, kind, err)
	}
	res := d.client.Resource(m.Resource).Namespace(d.namespace)
	if name != "" {
		obj, err := res.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if !selector.Matches(labels.Set(obj.GetLabels())) {
			return nil, nil
		}
		return []*unstructured.Unstructured{obj}, nil
	}
	list, err := res.List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// DecisionReader reads what clusterDecisionResource generators need from
// the cluster Argo CD runs in: the ConfigMap that names the duck type,
// and the resources of that type.
type DecisionReader interface {
	// ConfigMap returns the data of a ConfigMap in the controller's
	// namespace.
	ConfigMap(ctx context.Context, name string) (map[string]string, error)
	// List returns the objects of apiVersion and kind with name (when not
	// empty) matching selector.
	List(ctx context.Context, apiVersion, kind, name string, selector labels.Selector) ([]*unstructured.Unstructured, error)
}

// clusterDecisionResource reads the duck type from the ConfigMap
// (apiVersion, kind, statusListKey, matchKey), lists its resources and
// yields a set per entry of their status.<statusListKey> list whose
// matchKey names a known cluster: the entry's string fields, name,
// server (of that cluster) and values.
func (c *genCtx) clusterDecisionResource(ctx context.Context, g *ClusterDecisionResourceGenerator) ([]Params, error) {
	dr := c.r.opts.Decisions
	if dr == nil {
		return nil, fmt.Errorf("%w: no cluster to read clusterDecisionResource from", ErrNoProvider)
	}
	cm, err := dr.ConfigMap(ctx, g.ConfigMapRef)
	if err != nil {
		return nil, fmt.Errorf("configMapRef %s: %w", g.ConfigMapRef, err)
	}
	for _, k := range []string{"apiVersion", "kind", "statusListKey", "matchKey"} {
		if cm[k] == "" {
			return nil, fmt.Errorf("configMapRef %s: data.%s is missing", g.ConfigMapRef, k)
		}
	}
	if g.Name == "" && len(g.LabelSelector.MatchLabels) == 0 && len(g.LabelSelector.MatchExpressions) == 0 {
		return nil, fmt.Errorf("clusterDecisionResource needs a name or a labelSelector")
	}
	sel, err := metav1.LabelSelectorAsSelector(&g.LabelSelector)
	if err != nil {
		return nil, fmt.Errorf("labelSelector: %w", err)
	}
	objs, err := dr.List(ctx, cm["apiVersion"], cm["kind"], g.Name, sel)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", cm["apiVersion"], cm["kind"], err)
	}
	servers := map[string]string{}
	if c.r.opts.Clusters != nil {
		cls, err := c.r.opts.Clusters.Clusters(ctx)
		if err != nil {
			return nil, err
		}
		for _, cl := range cls {
			servers[cl.Name] = cl.Server
		}
	}
	if l := c.r.opts.LocalCluster; l != nil {
		if _, ok := servers[l.Name]; !ok {
			servers[l.Name] = l.Server
		}
	}
	var out []Params
	for _, o := range objs {
		list, _, _ := unstructured.NestedSlice(o.Object, "status", cm["statusListKey"])
		for _, el := range list {
			m, ok := el.(map[string]any)
			if !ok {
				continue
			}
			name, _ := m[cm["matchKey"]].(string)
			server, known := servers[name]
			if !known {
				continue // Argo CD skips decisions for unknown clusters
			}
			p := Params{}
			for k, v := range m {
				if s, ok := v.(string); ok {
					p[k] = s
				}
			}
			p["name"], p["server"] = name, server
			if err := c.addValues(p, g.Values); err != nil {
				return nil, err
			}
			out = append(out, p)
		}
	}
	return out, nil
}
