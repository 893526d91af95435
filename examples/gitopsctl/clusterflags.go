package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// InClusterServer is the destination server Argo CD Applications use for
// the cluster Argo CD runs in; gitopsctl gives that name to the cluster of
// --kubeconfig so that such Applications work unchanged.
const InClusterServer = "https://kubernetes.default.svc"

// clusterFlags are the flags every command that talks to a cluster takes,
// with the engine settings a host would set in Go, so that a user can
// reproduce a host's configuration without writing any.
type clusterFlags struct {
	kubeconfig string
	context    string
	verbose    bool
	engine     engineFlags
}

func (c *clusterFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	fs.StringVar(&c.context, "context", "", "kubeconfig context (default: the current context)")
	fs.BoolVar(&c.verbose, "v", false, "log what the engine does to stderr")
	c.engine.register(fs)
}

// restConfig loads the cluster's client configuration the way kubectl
// does: --kubeconfig, else $KUBECONFIG, else ~/.kube/config.
func (c *clusterFlags) restConfig() (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if c.kubeconfig != "" {
		rules.ExplicitPath = c.kubeconfig
	}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: c.context}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return cfg, nil
}

// engineOptions returns engine options whose destinations are the cluster
// of cfg, known both as "in-cluster" at InClusterServer and by its real
// URL.
func engineOptions(cfg *rest.Config, log logr.Logger) gitops.Options {
	opts := gitops.DefaultOptions()
	opts.Clusters = []gitops.ClusterConfig{{Name: "in-cluster", Server: InClusterServer, Config: cfg}}
	if host := strings.TrimSuffix(cfg.Host, "/"); host != "" && host != InClusterServer {
		opts.Clusters = append(opts.Clusters, gitops.ClusterConfig{Name: host, Server: host, Config: cfg})
	}
	opts.Log = log
	return opts
}

// engineOptions is the package function with the engine settings of the
// flags applied.
func (c *clusterFlags) engineOptions(cfg *rest.Config, stderr io.Writer) (gitops.Options, error) {
	opts := engineOptions(cfg, stderrLogger(stderr, c.verbose))
	return opts, c.engine.apply(&opts, cfg)
}

// stderrLogger returns a logger to w when verbose, else one that discards.
func stderrLogger(w io.Writer, verbose bool) logr.Logger {
	if !verbose {
		return logr.Discard()
	}
	return newLineLogger(w)
}
