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
