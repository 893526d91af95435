package clusters

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/version"
)

// checkKubeVersion refuses an offline destination's KubeVersion that is
// not a Kubernetes version: "1.37", "1.37.2" or "v1.37.2" (a suffix
// allowed, as Helm's --kube-version takes them); empty is the renderers'
// default. The error names the cluster.
func checkKubeVersion(c Config) error {
	if c.KubeVersion == "" {
		return nil
	}
	if _, err := version.ParseGeneric(c.KubeVersion); err != nil {
		name := c.Name
		if name == "" {
			name = c.Server
		}
		return fmt.Errorf("gitops: cluster %s: KubeVersion %q is not a Kubernetes version such as 1.37, 1.37.2 or v1.37.2", name, c.KubeVersion)
	}
	return nil
}
