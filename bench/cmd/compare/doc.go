// Command compare measures the gitops library side by side with what a user
// would pick instead, in one process run against one local cluster, and
// prints a table of figures and ratios.
//
// Every comparison is measured in the same run, back to back, on the same
// cluster and data, and every figure is the median of -repeat runs, because
// absolute times on a shared machine move with its load while ratios
// measured together hold. The sections are:
//
//   - diff: per-object time and allocations of each diff mode on
//     realistic Deployments read back from the API server; the server-side
//     modes against Flux's ssa ResourceManager.Diff (a Get and a dry-run per
//     object), the local modes against gitops-engine's published figure.
//   - cache: the cluster cache's initial sync against a bare paginated list
//     of the same ConfigMaps, and the heap it keeps per object.
//   - sync: first sync and resync of ConfigMaps and Deployments into fresh
//     namespaces with sync.Syncer, against the floor (plain parallel
//     server-side apply patches from client-go), `kubectl apply
//     --server-side` and Flux's ssa ResourceManager.ApplyAllStaged; the
//     requests and writes each Go client sends are counted.
//   - helm: Helm rendering in a fresh process (this program re-executed to
//     render once), in a running process without and with the render
//     cache, each against the `helm template` binary built from the same
//     Helm module.
//   - git: a depth-1 fetch with source/git against `git clone --depth 1`
//     and `git fetch --depth 1` from the same `git http-backend`.
//
// Go clients run with no client-side rate limit (QPS -1), so the work is
// compared rather than token buckets. By default the cluster is etcd and
// kube-apiserver only (no controllers adding load while timings run); set
// -cluster full for the whole testenv cluster, or GITOPS_TESTENV_KUBECONFIG
// to attach to a running one.
//
// Usage:
//
//	cd bench && go run ./cmd/compare [-only diff,sync] [-repeat 3] [-diff-objects 1000] ...
package main
