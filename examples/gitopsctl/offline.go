package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/source/repocreds"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// offlineFlags are the flags of rendering without a cluster, as `helm
// template` takes them. Its --repositories is the cluster flags' own
// (clusterFlags.repositories) on commands that take both.
type offlineFlags struct {
	offline     bool
	kubeVersion string
	apiVersions stringList
}

func (o *offlineFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&o.offline, "offline", false, "render without a cluster (also used, with a notice, when no kubeconfig loads)")
	fs.StringVar(&o.kubeVersion, "kube-version", "", "Kubernetes version the manifests are rendered for when offline (Helm's .Capabilities.KubeVersion)")
	fs.Var(&o.apiVersions, "api-versions", "API versions available when offline (Helm's .Capabilities.APIVersions); repeatable or comma-separated")
}

// repositoriesUsage is the help of --repositories.
const repositoriesUsage = "Argo CD repository Secrets (secret-type repository / repo-creds) and argocd-tls-certs-cm: a YAML file of them, or cluster:NAMESPACE to read them from the cluster"

// stringList is a repeatable, comma-separated flag.
type stringList []string

// String implements flag.Value.
func (s *stringList) String() string { return strings.Join(*s, ",") }

// Set implements flag.Value.
func (s *stringList) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*s = append(*s, part)
		}
	}
	return nil
}

// repositoryCredentials installs the credentials of --repositories
// (spec: a file, or cluster:NAMESPACE read through cfg) into opts, and
// returns them (the source hydrator pushes with their write Secrets);
// each field read without effect (or malformed) is named on stderr. An
// empty spec leaves opts as it is and returns nil.
func repositoryCredentials(ctx context.Context, spec string, cfg *rest.Config, stderr io.Writer, opts *gitops.Options) (*repocreds.Store, error) {
	if spec == "" {
		return nil, nil
	}
	var store *repocreds.Store
	var err error
	if ns, ok := strings.CutPrefix(spec, "cluster:"); ok {
		if cfg == nil {
			return nil, fmt.Errorf("--repositories %s: no cluster to read them from", spec)
		}
		var kube kubernetes.Interface
		if kube, err = kubernetes.NewForConfig(cfg); err == nil {
			store, err = repocreds.LoadNamespace(ctx, kube, ns)
		}
	} else {
		store, err = repocreds.LoadFile(spec)
	}
	if err != nil {
		return nil, fmt.Errorf("--repositories: %w", err)
	}
	for _, w := range store.Warnings() {
		fmt.Fprintf(stderr, "gitopsctl: --repositories: %s\n", w)
	}
	opts.ProjectCredentials = store.ForProject
	return store, nil
}

// offlineEngine builds an engine whose only destination is the app's own,
// offline: nothing connects to a cluster, and Helm sees --kube-version and
// --api-versions.
func (o *offlineFlags) offlineEngine(stderr io.Writer, cmd *appCommand) error {
	app, err := loadApp(cmd.appFile, cmd.appName)
	if err != nil {
		return err
	}
	opts := gitops.DefaultOptions()
	opts.Log = stderrLogger(stderr, cmd.cluster.verbose)
	dest := app.Spec.Destination
	name, server := dest.Name, dest.Server
	if name == "" && server == "" {
		server = v1alpha1.KubernetesInternalAPIServerAddr
	}
	if name == "" {
		name = "offline"
	}
	if server == "" {
		server = "https://" + name + ".offline.invalid"
	}
	opts.Clusters = []gitops.ClusterConfig{{Name: name, Server: server, KubeVersion: o.kubeVersion, APIVersions: o.apiVersions}}
	if _, err := repositoryCredentials(context.Background(), cmd.cluster.repositories, nil, stderr, &opts); err != nil {
		return err
	}
	if err := cmd.cluster.engine.sops.apply(context.Background(), &opts); err != nil {
		return err
	}
	e, err := gitops.New(opts)
	if err != nil {
		return err
	}
	cmd.app, cmd.engine = app, e
	return nil
}

// setupMaybeOffline builds the engine of a command: offline when asked,
// or when no kubeconfig loads (with a one-line notice); else connected.
// It reports whether the engine is offline.
func (o *offlineFlags) setupMaybeOffline(stderr io.Writer, cmd *appCommand, tweak func(*gitops.Options)) (bool, error) {
	if !o.offline {
		if _, err := cmd.cluster.restConfig(); err != nil {
			fmt.Fprintf(stderr, "gitopsctl: no cluster (%v): rendering offline\n", err)
			o.offline = true
		}
	}
	if o.offline {
		return true, o.offlineEngine(stderr, cmd)
	}
	return false, cmd.setup(stderr, tweak)
}

// loadLiveDir reads recorded live objects (*.yaml and *.yml of dir) by key.
func loadLiveDir(dir string) (map[resource.Key]*unstructured.Unstructured, error) {
	var files []string
	for _, pat := range []string{"*.yaml", "*.yml"} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return nil, err
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("--live-dir: %w", err)
		}
	}
	sort.Strings(files)
	live := map[resource.Key]*unstructured.Unstructured{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		objs, err := resource.Decode(f, data, resource.DefaultDecodeOptions())
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			live[resource.KeyOf(obj)] = obj
		}
	}
	return live, nil
}

// diffLive compares the app's rendered objects with the recorded live
// state as server-side apply would merge them, and prints what a sync
// would change in the format of the connected diff. It returns the exit
// status: 0 in sync, 1 out of sync.
func diffLive(ctx context.Context, e *gitops.Engine, app *gitops.Application, live map[resource.Key]*unstructured.Unstructured, stdout io.Writer) (int, error) {
	objs, _, err := e.Render(ctx, app)
	if err != nil {
		return 2, err
	}
	opts := diff.DefaultOptions()
	opts.Mode = diff.ModeStructuredMerge
	differ, err := diff.New(opts)
	if err != nil {
		return 2, err
	}
	tracking := resource.DefaultTracking()
	desired := map[resource.Key]bool{}
	code := 0
	for _, obj := range objs {
		if obj.GetNamespace() == "" && !resource.BuiltinClusterScoped(obj.GetKind()) {
			obj.SetNamespace(app.Spec.Destination.Namespace)
		}
		key := resource.KeyOf(obj)
		desired[key] = true
		res, err := differ.Diff(ctx, obj, live[key])
		if err != nil {
			return 2, err
		}
		if res.Modified {
			code = 1
			fmt.Fprintf(stdout, "===== %s\n%s", key, withNewline(res.Text))
		}
	}
	var prune []string
	for key, obj := range live {
		if !desired[key] && tracking.AppOf(obj) == app.Name {
			prune = append(prune, key.String())
		}
	}
	sort.Strings(prune)
	for _, k := range prune {
		code = 1
		fmt.Fprintf(stdout, "===== %s: live only, not in Git (pruned by sync --prune)\n", k)
	}
	return code, nil
}

func withNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}
