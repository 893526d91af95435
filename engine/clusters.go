package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/kubegitops/gitops/engine/internal/clusters"
	"github.com/kubegitops/gitops/engine/internal/metrics"
	"github.com/kubegitops/gitops/project"
)

// ClusterUnavailableError reports a destination that cannot be reached or
// whose live state cannot be read. Only the apps of that cluster are
// affected: their status is Unknown until it comes back.
type ClusterUnavailableError struct {
	// Cluster is the destination's name.
	Cluster string
	// Err is the cause.
	Err error
}

// Error names the cluster and the cause.
func (e *ClusterUnavailableError) Error() string {
	return fmt.Sprintf("cluster %s is unavailable: %v", e.Cluster, e.Err)
}

// Unwrap returns the cause.
func (e *ClusterUnavailableError) Unwrap() error { return e.Err }

// cluster returns the destination's state, connecting on first use (see
// clusters.Set.Connect); an unreachable cluster is a
// *ClusterUnavailableError.
func (e *Engine) cluster(ctx context.Context, dest ApplicationDestination) (*clusterState, error) {
	cs, err := e.clusters.Connect(ctx, dest)
	var u *clusters.UnavailableError
	if errors.As(err, &u) {
		return nil, &ClusterUnavailableError{Cluster: u.Cluster, Err: u.Err}
	}
	return cs, err
}

// destination finds the configured cluster an app names, by server URL or
// by name, without connecting to it.
func (e *Engine) destination(dest ApplicationDestination) (*clusterState, error) {
	return e.clusters.Lookup(dest)
}

// syncerFor returns the syncer for an app: the cluster's own, or one that
// impersonates the service account the app's project names, as
// Options.Impersonation says.
func (e *Engine) syncerFor(cs *clusterState, proj *Project, app *Application) (Syncer, error) {
	ns, name, ok, err := e.impersonate(proj, app)
	if err != nil || !ok {
		return cs.Syncer(), err
	}
	return e.clusters.SyncerAs(cs, ns, name)
}

// impersonate returns the service account the app's writes act as
// (Options.Impersonation): ok is false when they use the cluster's own
// credentials; with ImpersonationEnforced, a project that names none for
// the app's destination is an error (Argo CD's message).
func (e *Engine) impersonate(proj *Project, app *Application) (namespace, name string, ok bool, err error) {
	mode := e.parts().opts.Impersonation
	if mode == ImpersonationOff {
		return "", "", false, nil
	}
	namespace, name, ok = project.ServiceAccountFor(proj, app)
	if !ok && mode == ImpersonationEnforced {
		return "", "", false, fmt.Errorf("no matching service account found for destination server %s and namespace %s", e.destServer(app), app.Spec.Destination.Namespace)
	}
	return namespace, name, ok, nil
}

// destServer is the app's destination server URL (its cluster's, when
// the destination names the cluster).
func (e *Engine) destServer(app *Application) string {
	return e.clusters.Server(app.Spec.Destination)
}

// clusterObjects counts the objects in each connected cluster's cache
// that counts them.
func (e *Engine) clusterObjects() []metrics.ClusterObjects {
	var out []metrics.ClusterObjects
	for _, cs := range e.clusters.All() {
		if l, ok := cs.ConnectedCache().(interface{ Len() int }); ok {
			out = append(out, metrics.ClusterObjects{Name: cs.Name(), Server: cs.Config().Server, Objects: l.Len()})
		}
	}
	return out
}

// clusterConfigs are the clusters' configurations as package clusters
// takes them.
func clusterConfigs(cs []ClusterConfig) []clusters.Config {
	out := make([]clusters.Config, 0, len(cs))
	for _, c := range cs {
		out = append(out, clusters.Config{Name: c.Name, Server: c.Server, Config: c.Config, KubeVersion: c.KubeVersion,
			APIVersions: c.APIVersions, Namespaces: c.Namespaces, ClusterResources: c.ClusterResources, Project: c.Project})
	}
	return out
}
