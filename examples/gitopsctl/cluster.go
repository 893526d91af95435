package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kubegitops/gitops/testenv"
)

func runCluster(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "build" {
		return clusterBuild(ctx, stdout, stderr)
	}
	if len(args) == 0 || args[0] != "up" {
		fmt.Fprintln(stderr, "usage: gitopsctl cluster up [--kubeconfig-out FILE] [--apiserver-only] [--nodes N]\n       gitopsctl cluster build")
		return 2
	}
	fs := flag.NewFlagSet("cluster up", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("kubeconfig-out", filepath.Join(".cache", "kubeconfig"), "where to write the cluster's kubeconfig")
	apiOnly := fs.Bool("apiserver-only", false, "start etcd and kube-apiserver only (no controllers, no node)")
	nodes := fs.Int("nodes", 1, "number of fake kwok nodes")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	return clusterUp(ctx, *out, *apiOnly, *nodes, stdout, stderr)
}

// clusterUp starts a local cluster, writes its kubeconfig and waits for ctx
// to end (Ctrl-C), then stops the cluster and removes the kubeconfig.
func clusterUp(ctx context.Context, kubeconfigOut string, apiOnly bool, nodes int, stdout, stderr io.Writer) int {
	opts := testenv.DefaultOptions()
	opts.APIServerOnly = apiOnly
	opts.Nodes = nodes
	opts.Build.Log = func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
	start := time.Now()
	cluster, err := testenv.Start(ctx, opts)
	if err != nil {
		fmt.Fprintln(stderr, "gitopsctl:", err)
		return 1
	}
	defer cluster.Stop()
	data, err := os.ReadFile(cluster.Kubeconfig())
	if err == nil {
		err = os.MkdirAll(filepath.Dir(kubeconfigOut), 0o755)
	}
	if err == nil {
		err = os.WriteFile(kubeconfigOut, data, 0o600)
	}
	if err != nil {
		fmt.Fprintln(stderr, "gitopsctl: write kubeconfig:", err)
		return 1
	}
	defer os.Remove(kubeconfigOut)
	abs, _ := filepath.Abs(kubeconfigOut)
	fmt.Fprintf(stdout, "Local cluster ready in %s: Kubernetes %s at %s\n\n", time.Since(start).Round(100*time.Millisecond), testenv.KubernetesVersion, cluster.Server())
	fmt.Fprintf(stdout, "Use it with:\n  export KUBECONFIG=%s\n  kubectl get nodes\n\n", abs)
	fmt.Fprintf(stdout, "Component logs are in %s. Press Ctrl-C to stop the cluster.\n", cluster.Dir())
	<-ctx.Done()
	fmt.Fprintln(stdout, "\nStopping the cluster...")
	if err := cluster.Stop(); err != nil {
		fmt.Fprintln(stderr, "gitopsctl: stop:", err)
		return 1
	}
	fmt.Fprintln(stdout, "Stopped.")
	return 0
}

// clusterBuild builds (or finds in the cache) every program of the local
// cluster and prints where they are, so that later test runs start at once.
func clusterBuild(ctx context.Context, stdout, stderr io.Writer) int {
	opts := testenv.DefaultBuildOptions()
	opts.Log = func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
	start := time.Now()
	b, err := testenv.EnsureBinaries(ctx, true, opts)
	if err != nil {
		fmt.Fprintln(stderr, "gitopsctl:", err)
		return 1
	}
	fmt.Fprintf(stdout, "cluster binaries ready in %s:\n  %s\n  %s\n  %s\n  %s\n  %s\n", time.Since(start).Round(100*time.Millisecond),
		b.Etcd, b.APIServer, b.ControllerManager, b.Scheduler, b.Kwok)
	return 0
}
