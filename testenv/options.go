package testenv

import "time"

// EnvKubeconfig names the environment variable that points Start at an
// already running cluster: its value is a kubeconfig path, and Start then
// starts nothing and Stop stops nothing.
const EnvKubeconfig = "GITOPS_TESTENV_KUBECONFIG"

// EnvCacheDir names the environment variable that overrides where built
// binaries are cached (default: a folder under os.UserCacheDir()).
const EnvCacheDir = "GITOPS_TESTENV_CACHE"

// EnvKubebuilderAssets is envtest's variable: a folder holding etcd and
// kube-apiserver (and often kubectl). Binaries found there are used as they
// are; the others are built.
const EnvKubebuilderAssets = "KUBEBUILDER_ASSETS"

// Options configure a local cluster.
type Options struct {
	// APIServerOnly starts etcd and kube-apiserver only: no controllers, no
	// scheduler and no node, so Deployments never become Available, but the
	// cluster is ready in a couple of seconds. Default false.
	APIServerOnly bool
	// Users are extra identities with bearer tokens and no rights beyond
	// those of system:authenticated; give them rights with RBAC objects and
	// use them through Cluster.UserConfig.
	Users []User
	// Nodes is the number of fake kwok nodes. Default 1. Ignored with
	// APIServerOnly.
	Nodes int
	// StartTimeout bounds how long Start waits for every component to be
	// ready (not counting a first build of the binaries). Default 2 minutes.
	StartTimeout time.Duration
	// Build says where binaries are found or built.
	Build BuildOptions
	// ControllerQPS, when above zero, is the client rate limit of the
	// controller manager and the scheduler (burst twice as much; kwok
	// has no such limit to set),
	// and raises the controller manager's Deployment and ReplicaSet
	// workers to 20. Their defaults (20 requests per second for the
	// controller manager) roll out about four one-replica Deployments per
	// second, which caps any engine that waits for rollouts: a fleet
	// benchmark of thousands of apps measures the cluster's limit instead
	// of the engine's. Default 0: the components' own defaults, as a
	// cluster installed with them has.
	ControllerQPS int
	// KeepDir leaves the cluster's folder (etcd data, certificates,
	// kubeconfig, component logs) on disk after Stop, for debugging.
	KeepDir bool
}

// User is an extra identity for RBAC tests.
type User struct {
	// Name is the user name the API server sees.
	Name string
	// Groups are the user's groups, besides system:authenticated.
	Groups []string
}

// DefaultOptions returns the options of a full cluster with one node.
func DefaultOptions() Options {
	return Options{Nodes: 1, StartTimeout: 2 * time.Minute, Build: DefaultBuildOptions()}
}

func (o Options) withDefaults() Options {
	if o.Nodes <= 0 {
		o.Nodes = 1
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 2 * time.Minute
	}
	return o
}
