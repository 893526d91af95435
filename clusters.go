package gitops

import "github.com/kubegitops/gitops/cache/kubeconfig"

// ClustersFromKubeconfig returns a destination per context of the
// kubeconfig file at path (all contexts when none are named): each is known
// by the context's name and by its cluster's server URL, so Applications may
// name their destination either way. Errors name the file and the context,
// never credentials. It lives in the root, not in package engine, so that
// the lean core does not build client-go's kubeconfig loader.
func ClustersFromKubeconfig(path string, contexts ...string) ([]ClusterConfig, error) {
	named, err := kubeconfig.Load(path, contexts)
	if err != nil {
		return nil, err
	}
	out := make([]ClusterConfig, 0, len(named))
	for _, n := range named {
		out = append(out, ClusterConfig{Name: n.Name, Server: n.Config.Host, Config: n.Config})
	}
	return out, nil
}
