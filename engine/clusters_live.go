package engine

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"

	"github.com/kubegitops/gitops/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
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
func (e *Engine) SetClusters(ctx context.Context, clusters []ClusterConfig) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	next := map[string]*clusterState{}
	for _, c := range clusters {
		if c.Name == "" && c.Server == "" {
			return nil, fmt.Errorf("gitops: SetClusters: a cluster has neither a name nor a server URL")
		}
		for _, k := range []string{c.Name, c.Server} {
			if _, dup := next[k]; k != "" && dup {
				return nil, fmt.Errorf("gitops: SetClusters: two clusters are known as %s", k)
			}
			if k != "" {
				next[k] = nil
			}
		}
		for _, k := range []string{c.Name, c.Server} {
			if k != "" {
				next[k] = &clusterState{cfg: c}
			}
		}
	}
	e.mu.Lock()
	old := e.clusters
	var changed, stale []*clusterState
	kept := map[*clusterState]bool{}
	for k, cs := range next {
		if prev, ok := old[k]; ok && (kept[prev] || sameCluster(prev.cfg, cs.cfg)) {
			next[k], kept[prev] = prev, true
		}
	}
	seen := map[*clusterState]bool{}
	for _, cs := range next {
		if !kept[cs] && !seen[cs] {
			changed = append(changed, cs)
		}
		seen[cs] = true
	}
	for _, cs := range old {
		if !kept[cs] && !seen[cs] {
			stale = append(stale, cs)
			seen[cs] = true
		}
	}
	e.clusters = next
	r := e.runner
	e.mu.Unlock()
	for _, cs := range stale {
		cs.stopWhenConnected()
	}
	var names []string
	for _, cs := range append(changed, stale...) {
		names = append(names, cs.cfg.Name, cs.cfg.Server)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	names = slices.DeleteFunc(names, func(s string) bool { return s == "" })
	if r != nil {
		r.refreshDestinations(names)
	}
	return names, nil
}

// stopWhenConnected stops the cluster's cache once its connection, if one
// is being made, is done.
func (cs *clusterState) stopWhenConnected() {
	cs.once.Do(func() { cs.err = errReplaced })
	cs.stop()
}

// errReplaced is the connection error of a cluster SetClusters replaced
// before it connected.
var errReplaced = fmt.Errorf("the cluster's configuration was replaced")

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

// sameCluster reports whether two configurations name and reach the same
// cluster the same way.
func sameCluster(a, b ClusterConfig) bool {
	if a.Name != b.Name || a.Server != b.Server || a.ClusterResources != b.ClusterResources || a.Project != b.Project ||
		!slices.Equal(a.Namespaces, b.Namespaces) || a.KubeVersion != b.KubeVersion || !slices.Equal(a.APIVersions, b.APIVersions) {
		return false
	}
	if a.Config == nil || b.Config == nil {
		return a.Config == b.Config
	}
	return sameConnection(a.Config, b.Config)
}

// sameConnection compares what reaches and authenticates to a cluster.
// Functions cannot be compared: a proxy is compared by the URL it gives
// for the server, Dial, WrapTransport and Transport by being set.
func sameConnection(a, b *rest.Config) bool {
	if !sameProxy(a.Proxy, b.Proxy, a.Host) || (a.Dial == nil) != (b.Dial == nil) ||
		(a.WrapTransport == nil) != (b.WrapTransport == nil) || (a.Transport == nil) != (b.Transport == nil) {
		return false
	}
	x, y := *a, *b
	for _, p := range []*rest.Config{&x, &y} {
		p.Proxy, p.Dial, p.WrapTransport, p.Transport = nil, nil, nil, nil
		p.WarningHandler, p.WarningHandlerWithContext = nil, nil
	}
	return reflect.DeepEqual(x, y)
}

func sameProxy(a, b func(*http.Request) (*url.URL, error), host string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	u, err := url.Parse(host)
	if err != nil {
		return false
	}
	req := &http.Request{URL: u}
	ua, erra := a(req)
	ub, errb := b(req)
	return erra == nil && errb == nil && fmt.Sprint(ua) == fmt.Sprint(ub)
}

// manages refuses a desired object the cluster's Namespaces leave out, as
// Argo CD's namespaced cluster cache does.
func (cs *clusterState) manages(obj *unstructured.Unstructured, namespaced bool) error {
	ns := cs.cfg.Namespaces
	if len(ns) == 0 {
		return nil
	}
	key := resource.KeyOf(obj)
	switch {
	case !namespaced && !cs.cfg.ClusterResources:
		return fmt.Errorf("cluster %s: cluster level %s %q can not be managed when in namespaced mode (its Secret has no clusterResources: \"true\")", cs.cfg.Name, key.Kind, key.Name)
	case namespaced && !slices.Contains(ns, obj.GetNamespace()):
		return fmt.Errorf("cluster %s: namespace %s of %s %q is not managed (not in the cluster's namespaces)", cs.cfg.Name, obj.GetNamespace(), key.Kind, key.Name)
	}
	return nil
}
