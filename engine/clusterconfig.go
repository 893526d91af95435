package engine

import (
	"encoding/json"
	"fmt"

	"k8s.io/client-go/rest"
)

// ClusterConfig is a destination cluster, known by the name and the server
// URL that Applications use for it. An Application's destination.name
// matches Name and its destination.server matches Server, each on its
// own: a config with only a Name is not found by server, so give both
// (Argo CD's in-cluster is v1alpha1.KubernetesInClusterName and
// v1alpha1.KubernetesInternalAPIServerAddr). At least one is required.
type ClusterConfig struct {
	// Name is the destination name ("in-cluster").
	Name string
	// Server is the URL Applications write as destination.server, which may
	// differ from Config.Host (https://kubernetes.default.svc).
	Server string
	// Config reaches the cluster with the engine's identity. Nil makes
	// an offline destination: Engine.Render renders for it (with
	// KubeVersion and APIVersions) and nothing ever connects, which is
	// what a CI pipeline without a cluster wants; Refresh and Sync of its
	// apps fail with a ClusterUnavailableError.
	Config *rest.Config
	// KubeVersion and APIVersions describe an offline destination to the
	// renderers (Helm's .Capabilities); a connected cluster reports its
	// own. KubeVersion is "1.37", "1.37.2" or "v1.37.2" (New and SetClusters
	// refuse anything else); empty leaves each tool's default.
	KubeVersion string
	APIVersions []string
	// Namespaces, when not empty, are the only namespaces the engine
	// manages on the cluster (an Argo CD cluster Secret's namespaces):
	// its cache watches only them, and a desired object in another
	// namespace is a comparison error naming it. Default empty: the
	// whole cluster.
	Namespaces []string
	// ClusterResources lets a cluster with Namespaces manage
	// cluster-scoped objects too (clusterResources "true"); without it a
	// desired cluster-scoped object is a comparison error, as in Argo CD.
	// Ignored when Namespaces is empty.
	ClusterResources bool
	// Project is the project the cluster is scoped to (an Argo CD
	// project-scoped cluster, a cluster Secret's project): as in Argo CD,
	// the project's apps may deploy to the cluster in its Namespaces (any
	// when none) without the project's destinations listing it, and a
	// project with permitOnlyProjectScopedClusters lets its apps deploy to
	// the clusters scoped to it only.
	Project string
}

// String names the destination and how it authenticates, never a secret:
// "cluster(east, https://10.0.0.1:6443, bearer token, redacted)".
func (c ClusterConfig) String() string {
	if c.Config == nil {
		return fmt.Sprintf("cluster(%s, %s, offline)", c.Name, c.Server)
	}
	return fmt.Sprintf("cluster(%s, %s, %s, redacted)", c.Name, c.Server, authKind(c.Config))
}

// GoString implements fmt.GoStringer without secrets.
func (c ClusterConfig) GoString() string { return c.String() }

// Format implements fmt.Formatter: every verb prints String, so that no
// verb (%+v, %#v) reaches the tokens and keys of Config.
func (c ClusterConfig) Format(f fmt.State, _ rune) { fmt.Fprint(f, c.String()) }

// MarshalJSON encodes the name, the server URLs and the kind of
// authentication, never a secret.
func (c ClusterConfig) MarshalJSON() ([]byte, error) {
	v := struct {
		Name     string `json:"name"`
		Server   string `json:"server"`
		Host     string `json:"host,omitempty"`
		Auth     string `json:"auth"`
		Redacted bool   `json:"redacted"`
	}{Name: c.Name, Server: c.Server, Auth: "offline", Redacted: true}
	if c.Config != nil {
		v.Host, v.Auth = c.Config.Host, authKind(c.Config)
	}
	return json.Marshal(v)
}

// authKind names how a client config authenticates.
func authKind(cfg *rest.Config) string {
	switch {
	case cfg.BearerToken != "" || cfg.BearerTokenFile != "":
		return "bearer token"
	case len(cfg.KeyData) > 0 || cfg.KeyFile != "":
		return "client certificate"
	case cfg.Username != "" || cfg.Password != "":
		return "basic"
	case cfg.ExecProvider != nil:
		return "exec plugin"
	case cfg.AuthProvider != nil:
		return "auth provider"
	}
	return "none"
}
