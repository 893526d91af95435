package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/argocdcm"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/health/actions"
	"github.com/kubegitops/gitops/source/repocreds"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// clusterFlags are the flags every command that talks to a cluster takes,
// with the engine settings a host would set in Go, so that a user can
// reproduce a host's configuration without writing any.
type clusterFlags struct {
	kubeconfig string
	context    string
	verbose    bool
	engine     engineFlags
	scriptsDir string
	argocdCM   string
	// repositories is --repositories: Argo CD repository Secrets for the
	// engine's sources.
	repositories string
	// creds are --repositories' Secrets as engineOptions loaded them (nil
	// without the flag): the agent's hydrator pushes with their write
	// Secrets.
	creds *repocreds.Store
	// hydrator are --argocd-cm's source hydrator keys, as applyScripts
	// read them.
	hydrator argocdcm.HydratorSettings
}

func (c *clusterFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	fs.StringVar(&c.context, "context", "", "kubeconfig context (default: the current context)")
	fs.BoolVar(&c.verbose, "v", false, "log what the engine does to stderr")
	c.engine.register(fs)
	fs.StringVar(&c.scriptsDir, "scripts-dir", "", "health and action scripts in Argo CD's resource_customizations layout, used before the built-in ones")
	fs.StringVar(&c.argocdCM, "argocd-cm", "", "Argo CD settings: a file holding the argocd-cm ConfigMap, or cluster:NAMESPACE to read it from the cluster")
	fs.StringVar(&c.repositories, "repositories", "", repositoriesUsage)
}

// applyScripts loads --scripts-dir and --argocd-cm into opts. The
// folder's health.lua scripts override the built-in checks of their kinds
// and its actions folders replace the built-in actions of their kinds;
// argocd-cm's settings are applied as argocdcm.Settings.Apply does,
// its scripts winning over the folder's for the same kind. Warnings about
// argocd-cm keys the engine does not use go to stderr. Without either
// flag opts is left as it is.
func (c *clusterFlags) applyScripts(ctx context.Context, cfg *rest.Config, stderr io.Writer, opts *gitops.Options) error {
	settings := &argocdcm.Settings{HealthOverrides: map[string]string{}, Actions: map[string]actions.Definitions{}}

	if c.argocdCM != "" {
		var err error
		if ns, ok := strings.CutPrefix(c.argocdCM, "cluster:"); ok {
			settings, err = argocdcm.Read(ctx, cfg, ns)
		} else {
			settings, err = argocdcm.LoadFile(c.argocdCM)
		}
		if err != nil {
			return fmt.Errorf("--argocd-cm: %w", err)
		}
		for _, w := range settings.Warnings {
			fmt.Fprintln(stderr, "warning:", w)
		}
		c.hydrator = settings.Hydrator
	}
	if c.scriptsDir != "" {
		if st, err := os.Stat(c.scriptsDir); err != nil || !st.IsDir() {
			return fmt.Errorf("--scripts-dir %s is not a folder", c.scriptsDir)
		}
		fsys := os.DirFS(c.scriptsDir)
		overrides, err := health.LoadScripts(fsys)
		if err != nil {
			return fmt.Errorf("--scripts-dir: %w", err)
		}
		for k, v := range overrides {
			if _, set := settings.HealthOverrides[k]; !set {
				settings.HealthOverrides[k] = v
			}
		}
		defs, err := actions.LoadDir(fsys)
		if err != nil {
			return fmt.Errorf("--scripts-dir: %w", err)
		}
		for k, v := range defs {
			if _, set := settings.Actions[k]; !set {
				settings.Actions[k] = v
			}
		}
	}
	// --health-lua wins over argocd-cm and --scripts-dir for its kinds.
	for k, v := range c.engine.healthLua {
		settings.HealthOverrides[k] = v
	}
	if err := settings.Apply(opts); err != nil {
		return fmt.Errorf("--scripts-dir/--argocd-cm/--health-lua: %w", err)
	}
	return nil
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
// of cfg, known both as "in-cluster" at v1alpha1.KubernetesInternalAPIServerAddr and by its real
// URL.
func engineOptions(cfg *rest.Config, log logr.Logger) gitops.Options {
	opts := gitops.DefaultOptions()
	opts.Clusters = []gitops.ClusterConfig{{Name: v1alpha1.KubernetesInClusterName, Server: v1alpha1.KubernetesInternalAPIServerAddr, Config: cfg}}
	if host := strings.TrimSuffix(cfg.Host, "/"); host != "" && host != v1alpha1.KubernetesInternalAPIServerAddr {
		opts.Clusters = append(opts.Clusters, gitops.ClusterConfig{Name: host, Server: host, Config: cfg})
	}
	opts.Log = log
	return opts
}

// engineOptions is the package function with the engine settings of the
// flags applied: --state-namespace, --ref-cache-ttl,
// --recreate-on-immutable, --sops, --repositories, then the scripts and
// settings of --scripts-dir, --argocd-cm and --health-lua.
func (c *clusterFlags) engineOptions(ctx context.Context, cfg *rest.Config, stderr io.Writer) (gitops.Options, error) {
	opts := engineOptions(cfg, stderrLogger(stderr, c.verbose))
	if err := c.engine.apply(&opts, cfg); err != nil {
		return opts, err
	}
	if err := c.engine.sops.apply(ctx, &opts); err != nil {
		return opts, err
	}
	var err error
	if c.creds, err = repositoryCredentials(ctx, c.repositories, cfg, stderr, &opts); err != nil {
		return opts, err
	}
	return opts, c.applyScripts(ctx, cfg, stderr, &opts)
}

// stderrLogger returns a logger to w when verbose, else one that discards.
func stderrLogger(w io.Writer, verbose bool) logr.Logger {
	if !verbose {
		return logr.Discard()
	}
	return newLineLogger(w)
}
