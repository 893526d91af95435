package engine

import (
	"context"
	"slices"
)

// SetClusters replaces the engine's destinations while it runs (a host
// that watches Argo CD cluster Secrets calls it on every change). A
// cluster whose name or server is new is added; one that is no longer
// listed is removed and its cache stopped, so its apps fail with "not a
// configured cluster"; one whose connection changed (a rotated token or CA,
// another server, other namespaces) has its cache stopped and reconnects
// lazily with the new configuration on its apps' next refresh. An
// unchanged cluster keeps its cache. It returns the names of the clusters
// added, changed or removed; while Run runs, the apps naming one of them
// are queued for a refresh at once (a host with its own loop refreshes
// them itself). It fails, changing nothing, when a cluster has neither a
// name nor a server or two clusters share a name or server.
func (set Settings) SetClusters(ctx context.Context, clusters []ClusterConfig) ([]string, error) {
	e := set.e

	if err := ctx.Err(); err != nil {
		return nil, err
	}
	names, err := e.clusters.Replace(clusterConfigs(clusters))
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	r := e.runner
	e.mu.Unlock()
	if r != nil {
		r.refreshDestinations(names)
	}
	return names, nil
}

// refreshDestinations queues the apps whose destination names one of
// names (a name or server URL).
func (r *runner) refreshDestinations(names []string) {
	r.mu.Lock()
	var keys []string
	for key, st := range r.apps {
		d := st.app.Spec.Destination
		if (d.Server != "" && slices.Contains(names, d.Server)) || (d.Name != "" && slices.Contains(names, d.Name)) {
			keys = append(keys, key)
		}
	}
	r.mu.Unlock()
	for _, k := range keys {
		r.queue.Add(k)
	}
}
