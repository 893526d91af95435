package appset

import (
	"context"
	"fmt"
	"maps"
	"sort"

	"github.com/kubegitops/gitops/internal/clustersecret"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// SecretTypeLabel marks an Argo CD cluster Secret (value "cluster").
const SecretTypeLabel = clustersecret.TypeLabel

// ClustersFromSecrets reads Argo CD cluster Secrets: those labelled
// argocd.argoproj.io/secret-type: cluster, with name, server and project
// in data (base64) or stringData. Other objects are skipped. They are read
// by the parser the engine's destinations use (gitops.ClusterFromSecret),
// so a Secret the engine refuses (no server, a malformed config) is an
// error here too, naming the Secret and the key, as Argo CD's generator
// fails on a Secret it cannot read.
func ClustersFromSecrets(objs []*unstructured.Unstructured) ([]Cluster, error) {
	var out []Cluster
	for _, o := range objs {
		if o.GetKind() != "Secret" || !clustersecret.IsClusterSecret(o.GetLabels()) {
			continue
		}
		c, err := clustersecret.FromUnstructured(o)
		if err != nil {
			return nil, err
		}
		out = append(out, Cluster{Name: c.Name, Server: c.Server, Project: c.Project, Labels: c.Labels, Annotations: c.Annotations})
	}
	return out, nil
}

// StaticClusters is a fixed list of clusters (a host's, a test's, or
// the CLI's --clusters file).
type StaticClusters []Cluster

// Clusters returns the list.
func (s StaticClusters) Clusters(context.Context) ([]Cluster, error) { return s, nil }

// clusters yields one set per cluster matching the selector: name,
// nameNormalized, server, project, metadata.labels.<k>,
// metadata.annotations.<k> and values.<k> (nested under goTemplate). The
// local cluster joins when there is no selector and no Secret describes
// it. flatList yields one set {clusters: [...]} instead.
func (c *genCtx) clusters(ctx context.Context, g *ClustersGenerator) ([]Params, error) {
	var all []Cluster
	if c.r.opts.Clusters != nil {
		var err error
		if all, err = c.r.opts.Clusters.Clusters(ctx); err != nil {
			return nil, fmt.Errorf("clusters: %w", err)
		}
	}
	sel, err := metav1.LabelSelectorAsSelector(&g.Selector)
	if err != nil {
		return nil, fmt.Errorf("selector: %w", err)
	}
	var picked []Cluster
	local := c.r.opts.LocalCluster
	for _, cl := range all {
		if local != nil && cl.Server == local.Server {
			local = nil
		}
		if sel.Matches(labels.Set(cl.Labels)) {
			picked = append(picked, cl)
		}
	}
	if local != nil && sel.Empty() {
		picked = append(picked, *local)
	}
	sort.SliceStable(picked, func(i, j int) bool { return picked[i].Name < picked[j].Name })
	var out []Params
	for _, cl := range picked {
		p := Params{"name": cl.Name, "nameNormalized": SanitizeName(cl.Name), "server": cl.Server, "project": cl.Project}
		if c.tmpl.goTemplate {
			p["metadata"] = map[string]any{"labels": anyMap(cl.Labels), "annotations": anyMap(cl.Annotations)}
		} else {
			for k, v := range cl.Labels {
				p["metadata.labels."+k] = v
			}
			for k, v := range cl.Annotations {
				p["metadata.annotations."+k] = v
			}
		}
		if err := c.addValues(p, g.Values); err != nil {
			return nil, fmt.Errorf("cluster %s: %w", cl.Name, err)
		}
		out = append(out, p)
	}
	if g.FlatList {
		list := make([]any, len(out))
		for i, p := range out {
			list[i] = map[string]any(p)
		}
		return []Params{{"clusters": list}}, nil
	}
	return out, nil
}

func anyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range maps.All(m) {
		out[k] = v
	}
	return out
}
