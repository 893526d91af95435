package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// Exit statuses.
const (
	exitInSync    = 0
	exitOutOfSync = 1
	exitError     = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// config is what the flags say.
type config struct {
	appFile     string
	kubeconfig  string
	kubeVersion string
	apiVersions []string
	timeout     time.Duration
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	var apiVersions string
	fs := flag.NewFlagSet("cistep", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.appFile, "app", "", "file of Argo CD Application manifests (required)")
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster to diff against; none renders offline and prints the manifests")
	fs.StringVar(&c.kubeVersion, "kube-version", "1.31.0", "Kubernetes version the offline render assumes")
	fs.StringVar(&apiVersions, "api-versions", "", "comma-separated API versions the offline render assumes (Helm's .Capabilities)")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Minute, "bound of the whole step")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.appFile == "" {
		return c, errors.New("--app is required")
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if apiVersions != "" {
		c.apiVersions = strings.Split(apiVersions, ",")
	}
	return c, nil
}

// run is the whole step; it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parseFlags(args, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "cistep:", err)
		return exitError
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()

	apps, err := loadApps(c.appFile)
	if err != nil {
		fmt.Fprintln(stderr, "cistep:", err)
		return exitError
	}
	opts := gitops.DefaultOptions()
	opts.Clusters, err = clusters(c, apps)
	if err != nil {
		fmt.Fprintln(stderr, "cistep:", err)
		return exitError
	}
	e, err := gitops.New(opts)
	if err != nil {
		fmt.Fprintln(stderr, "cistep:", err)
		return exitError
	}
	defer e.Close()

	code := exitInSync
	for i := range apps {
		app := &apps[i]
		var appCode int
		if c.kubeconfig == "" {
			appCode = printManifests(ctx, e, app, stdout, stderr)
		} else {
			appCode = diffApp(ctx, e, app, stdout, stderr)
		}
		code = max(code, appCode)
	}
	return code
}

// loadApps reads the Applications of file, strictly.
func loadApps(file string) ([]v1alpha1.Application, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	apps, err := v1alpha1.LoadApplications(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(apps) == 0 {
		return nil, fmt.Errorf("%s: no Application", file)
	}
	dir, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return nil, err
	}
	for i := range apps {
		spec := &apps[i].Spec
		if spec.Source != nil {
			spec.Source.RepoURL = localRepo(dir, spec.Source.RepoURL)
		}
		for j := range spec.Sources {
			spec.Sources[j].RepoURL = localRepo(dir, spec.Sources[j].RepoURL)
		}
	}
	return apps, nil
}

// localRepo makes a relative folder path absolute, relative to dir (the app
// file's folder), so that an app of a checkout can name a folder of it: the
// engine reads local folders from absolute paths and file:// URLs only, and
// takes anything else for a Git URL. URLs and scp-like Git addresses
// (anything with a colon) are kept as they are.
func localRepo(dir, repoURL string) string {
	if repoURL == "" || filepath.IsAbs(repoURL) || strings.Contains(repoURL, ":") {
		return repoURL
	}
	return filepath.Join(dir, repoURL)
}

// clusters gives every destination the apps name: the kubeconfig's current
// context when there is one, else an offline destination that renders with
// the flags' versions and never connects.
func clusters(c config, apps []v1alpha1.Application) ([]gitops.ClusterConfig, error) {
	base := gitops.ClusterConfig{KubeVersion: c.kubeVersion, APIVersions: c.apiVersions}
	if c.kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", c.kubeconfig, err)
		}
		base = gitops.ClusterConfig{Config: cfg}
	}
	seen := map[v1alpha1.ApplicationDestination]bool{}
	var out []gitops.ClusterConfig
	for _, app := range apps {
		d := app.Spec.Destination
		d.Namespace = ""
		if seen[d] {
			continue
		}
		seen[d] = true
		cc := base
		cc.Name, cc.Server = d.Name, d.Server
		switch {
		case cc.Name == "" && cc.Server == v1alpha1.KubernetesInternalAPIServerAddr:
			cc.Name = v1alpha1.KubernetesInClusterName
		case cc.Server == "" && cc.Name == v1alpha1.KubernetesInClusterName:
			cc.Server = v1alpha1.KubernetesInternalAPIServerAddr
		case cc.Name == "":
			cc.Name = cc.Server
		case cc.Server == "":
			cc.Server = "https://" + cc.Name
		}
		out = append(out, cc)
	}
	return out, nil
}

// printManifests renders app offline and writes its objects as a YAML stream.
func printManifests(ctx context.Context, e *gitops.Engine, app *v1alpha1.Application, stdout, stderr io.Writer) int {
	key := v1alpha1.KeyOf(app)
	objs, revision, err := e.Render(ctx, app)
	if err != nil {
		fmt.Fprintf(stderr, "cistep: %s: %v\n", key, err)
		return exitError
	}
	fmt.Fprintf(stdout, "# %s at %s: %d objects\n", key, revision, len(objs))
	for _, obj := range objs {
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			fmt.Fprintf(stderr, "cistep: %s: %v\n", key, err)
			return exitError
		}
		fmt.Fprintf(stdout, "---\n%s", data)
	}
	return exitInSync
}

// diffApp compares app with its cluster and prints every object that differs.
func diffApp(ctx context.Context, e *gitops.Engine, app *v1alpha1.Application, stdout, stderr io.Writer) int {
	key := v1alpha1.KeyOf(app)
	st, err := e.Refresh(ctx, app)
	for _, c := range st.Conditions {
		fmt.Fprintf(stderr, "%s: %s: %s\n", key, c.Type, c.Message)
	}
	if err != nil {
		fmt.Fprintf(stderr, "cistep: %s: %v\n", key, err)
		return exitError
	}
	fmt.Fprintf(stdout, "%s: %s, %s at %s\n", key, st.Sync, st.Health.Code, st.Revision)
	if st.Sync == appstatus.Synced {
		return exitInSync
	}
	for _, row := range st.Resources {
		if row.Status != appstatus.OutOfSync || row.Hook {
			continue
		}
		switch {
		case row.RequiresPruning:
			fmt.Fprintf(stdout, "  %s: requires pruning\n", row.Key)
		default:
			fmt.Fprintf(stdout, "  %s: out of sync\n%s\n", row.Key, row.Diff)
		}
	}
	if st.Sync == appstatus.OutOfSync {
		return exitOutOfSync
	}
	return exitError
}
