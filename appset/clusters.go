package appset

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"

	"github.com/kubegitops/gitops/internal/clustersecret"
	corev1 "k8s.io/api/core/v1"
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
// so a Secret the engine refuses (no server, a malformed config) is not
// read here either: the clusters that were read come back with a
// *ClustersError naming each Secret left out and its key.
func ClustersFromSecrets(objs []*unstructured.Unstructured) ([]Cluster, error) {
	var out []Cluster
	var bad ClustersError
	for _, o := range objs {
		if o.GetKind() != "Secret" || !clustersecret.IsClusterSecret(o.GetLabels()) {
			continue
		}
		c, err := clustersecret.FromUnstructured(o)
		if err != nil {
			bad.Errs = append(bad.Errs, err)
			continue
		}
		out = append(out, clusterOf(c))
	}
	return out, bad.orNil()
}

// ClustersFromTypedSecrets is ClustersFromSecrets for Secrets read from a
// cluster (a client's list).
func ClustersFromTypedSecrets(secrets []corev1.Secret) ([]Cluster, error) {
	var out []Cluster
	var bad ClustersError
	for i := range secrets {
		if !clustersecret.IsClusterSecret(secrets[i].Labels) {
			continue
		}
		c, err := clustersecret.FromSecret(&secrets[i])
		if err != nil {
			bad.Errs = append(bad.Errs, err)
			continue
		}
		out = append(out, clusterOf(c))
	}
	return out, bad.orNil()
}

func clusterOf(c clustersecret.Cluster) Cluster {
	return Cluster{Name: c.Name, Server: c.Server, Project: c.Project, Labels: c.Labels, Annotations: c.Annotations}
}

// ClustersError names the cluster Secrets that could not be read. A
// Clusters lister returns it with the clusters it could read: a clusters
// generator then yields those, and the set reports the error (its
// ParametersGenerated condition is False, never "Successfully generated
// parameters for all Applications") and deletes nothing.
type ClustersError struct {
	// Errs are the errors of the clusters that could not be read.
	Errs []error
}

// Error implements error.
func (e *ClustersError) Error() string {
	return fmt.Sprintf("%d cluster secret(s) could not be read: %v", len(e.Errs), errors.Join(e.Errs...))
}

// Unwrap returns the errors of each Secret.
func (e *ClustersError) Unwrap() []error { return e.Errs }

func (e *ClustersError) orNil() error {
	if e == nil || len(e.Errs) == 0 {
		return nil
	}
	return e
}

// partialError is a generator's failure that still yielded parameter
// sets (a clusters generator some of whose Secrets could not be read).
type partialError struct{ err error }

// Error implements error: the generator's failure as it is.
func (e *partialError) Error() string { return e.err.Error() }

// Unwrap returns the generator's failure.
func (e *partialError) Unwrap() error { return e.err }

// StaticClusters is a fixed list of clusters (a host's, a test's, or
// the CLI's --clusters file).
type StaticClusters []Cluster

// Clusters returns the list.
func (s StaticClusters) Clusters(context.Context) ([]Cluster, error) { return s, nil }

// clusters yields one set per cluster matching the selector: name,
// nameNormalized, server, project, metadata.labels.<k>,
// metadata.annotations.<k> and values.<k> (nested under goTemplate). The
// local cluster joins when there is no selector, no Secret describes it
// and Options.InClusterEnabled does not say no. flatList yields one set
// {clusters: [...]} instead. Cluster Secrets that could not be read
// (*ClustersError) leave the others generated and fail the generator
// with a partial result: the set keeps the Applications it had for them.
func (c *genCtx) clusters(ctx context.Context, g *ClustersGenerator) ([]Params, error) {
	var all []Cluster
	var unread error
	if c.r.opts.Clusters != nil {
		var err error
		all, err = c.r.opts.Clusters.Clusters(ctx)
		var ce *ClustersError
		switch {
		case errors.As(err, &ce):
			unread = err
		case err != nil:
			return nil, fmt.Errorf("clusters: %w", err)
		}
	}
	sel, err := metav1.LabelSelectorAsSelector(&g.Selector)
	if err != nil {
		return nil, fmt.Errorf("selector: %w", err)
	}
	local, err := c.localCluster(ctx)
	if err != nil {
		return nil, err
	}
	var picked []Cluster
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
		out = []Params{{"clusters": list}}
	}
	if unread != nil {
		return out, &partialError{err: fmt.Errorf("clusters: %w", unread)}
	}
	return out, nil
}

// localCluster is Options.LocalCluster unless Options.InClusterEnabled
// says Argo CD's cluster.inClusterEnabled is "false".
func (c *genCtx) localCluster(ctx context.Context) (*Cluster, error) {
	l := c.r.opts.LocalCluster
	if l == nil || c.r.opts.InClusterEnabled == nil {
		return l, nil
	}
	on, err := c.r.opts.InClusterEnabled(ctx)
	if err != nil {
		return nil, fmt.Errorf("clusters: in-cluster enabled: %w", err)
	}
	if !on {
		return nil, nil
	}
	return l, nil
}

func anyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range maps.All(m) {
		out[k] = v
	}
	return out
}
