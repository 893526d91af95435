package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// clusterFlags are the flags every command that talks to a cluster takes.
type clusterFlags struct {
	kubeconfig string
	context    string
	verbose    bool
}

func (c *clusterFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	fs.StringVar(&c.context, "context", "", "kubeconfig context (default: the current context)")
	fs.BoolVar(&c.verbose, "v", false, "log what the engine does to stderr")
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

// stderrLogger returns a logger to w when verbose, else one that discards.
func stderrLogger(w io.Writer, verbose bool) logr.Logger {
	if !verbose {
		return logr.Discard()
	}
	return newLineLogger(w)
}

// loadApp reads the one Application of file, or the one called name when
// the file holds several.
func loadApp(file, name string) (*gitops.Application, error) {
	if file == "" {
		return nil, fmt.Errorf("--app FILE is required")
	}
	apps, err := loadAppFile(file)
	if err != nil {
		return nil, err
	}
	if name == "" && len(apps) == 1 {
		return apps[0], nil
	}
	var names []string
	for _, a := range apps {
		if a.Name == name {
			return a, nil
		}
		names = append(names, a.Name)
	}
	if name == "" {
		return nil, fmt.Errorf("%s holds %d applications (%s): pick one with --name", file, len(apps), strings.Join(names, ", "))
	}
	return nil, fmt.Errorf("%s: no application %q (have %s)", file, name, strings.Join(names, ", "))
}

// loadAppFile decodes every Application of one file strictly.
func loadAppFile(file string) ([]*gitops.Application, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	apps, err := gitops.LoadApplications(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(apps) == 0 {
		return nil, fmt.Errorf("%s: no Application found", file)
	}
	out := make([]*gitops.Application, len(apps))
	for i := range apps {
		out[i] = &apps[i]
	}
	return out, nil
}

// loadAppsPath reads a file, or every .yaml, .yml and .json file of a
// folder (not recursively), and refuses two applications of one name.
func loadAppsPath(path string) ([]*gitops.Application, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	files := []string{path}
	if info.IsDir() {
		files = nil
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			switch strings.ToLower(filepath.Ext(e.Name())) {
			case ".yaml", ".yml", ".json":
				if !e.IsDir() {
					files = append(files, filepath.Join(path, e.Name()))
				}
			}
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no .yaml, .yml or .json file", path)
		}
	}
	var out []*gitops.Application
	seen := map[string]string{}
	for _, f := range files {
		apps, err := loadAppFile(f)
		if err != nil {
			return nil, err
		}
		for _, a := range apps {
			if prev, dup := seen[a.Name]; dup {
				return nil, fmt.Errorf("application %q is defined in %s and in %s", a.Name, prev, f)
			}
			seen[a.Name] = f
			out = append(out, a)
		}
	}
	return out, nil
}

// appCommand is the shared setup of render, diff, sync and status: flags
// parsed, the application loaded and an engine built. Close releases it.
type appCommand struct {
	cluster clusterFlags
	appFile string
	appName string
	app     *gitops.Application
	engine  *gitops.Engine
}

func (a *appCommand) register(fs *flag.FlagSet) {
	a.cluster.register(fs)
	fs.StringVar(&a.appFile, "app", "", "file holding the Application (argoproj.io/v1alpha1)")
	fs.StringVar(&a.appName, "name", "", "the application to use when --app holds several")
}

// setup loads the app and builds the engine; tweak may adjust the options.
func (a *appCommand) setup(stderr io.Writer, tweak func(*gitops.Options)) error {
	app, err := loadApp(a.appFile, a.appName)
	if err != nil {
		return err
	}
	cfg, err := a.cluster.restConfig()
	if err != nil {
		return err
	}
	opts := engineOptions(cfg, stderrLogger(stderr, a.cluster.verbose))
	if tweak != nil {
		tweak(&opts)
	}
	e, err := gitops.New(opts)
	if err != nil {
		return err
	}
	a.app, a.engine = app, e
	return nil
}

// Close stops the engine's caches.
func (a *appCommand) Close() {
	if a.engine != nil {
		a.engine.Close()
	}
}

// parseFlags parses args and refuses positional arguments; false means the
// command must return 2.
func parseFlags(fs *flag.FlagSet, args []string) bool {
	if err := fs.Parse(args); err != nil {
		return false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return false
	}
	return true
}

// fail prints an error of a command and returns exit status 2.
func fail(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "gitopsctl %s: %v\n", cmd, err)
	return 2
}
