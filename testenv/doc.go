// Package testenv starts a real local Kubernetes cluster for tests: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and kwok (which
// fakes a node, so Pods run, Deployments become Available and Jobs complete),
// each a child process of the test binary, on free loopback ports.
//
// The programs are built from Go modules, not downloaded: the versions are
// pinned by a tools module embedded in this package (see tools/README.md),
// built once into a versioned folder of the user cache and reused by every
// later run and every test package. The first build takes several minutes;
// later ones take none. Binaries found in KUBEBUILDER_ASSETS (etcd and
// kube-apiserver from envtest) are used instead of building them.
//
// A test package usually shares one cluster:
//
//	var cluster *testenv.Cluster
//
//	func TestMain(m *testing.M) {
//		os.Exit(testenv.RunMain(m, testenv.DefaultOptions(), &cluster))
//	}
//
// and gives each test its own namespace with cluster.TestNamespace(t).
//
// Options.APIServerOnly starts etcd and kube-apiserver alone, which is
// ready in about two seconds and enough for anything that needs no
// controllers. Options.Users adds users with bearer tokens and no rights, for
// RBAC tests. Pod logs are real too: kwok serves as every node's kubelet
// endpoint, and every container's current and previous logs are the files
// of PodLogFiles (append with AppendPodLog), so GetLogs, with follow and
// previous, works through the API server. So does exec (pods/exec, with a
// TTY or not): kwok runs the command on this machine in the cluster's
// directory, with TERM=dumb and PS1="$ ". RestartAPIServer, StopAPIServer and StartAPIServer exist for
// fault tests. Setting GITOPS_TESTENV_KUBECONFIG points Start at an already
// running cluster instead, whose lifecycle it then leaves alone.
//
// Child processes never outlive the test binary: on Linux each one is started
// with a parent-death signal from an OS thread that lives as long as the
// cluster, so even a test binary killed by a timeout takes them with it.
package testenv
