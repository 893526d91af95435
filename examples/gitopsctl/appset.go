package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// repoDirs is the repeatable --repo-dir URL=DIR flag.
type repoDirs map[string]string

// String implements flag.Value.
func (r repoDirs) String() string { return fmt.Sprint(map[string]string(r)) }

// Set implements flag.Value.
func (r repoDirs) Set(v string) error {
	url, dir, ok := strings.Cut(v, "=")
	if !ok || url == "" || dir == "" {
		return fmt.Errorf("want URL=DIR, got %q", v)
	}
	r[url] = dir
	return nil
}

// runAppSet is `gitopsctl appset generate`: it prints the Applications the
// ApplicationSets of --appset generate, sorted by namespace and name, as
// a YAML stream, without a cluster or a network: git generators read the
// folders given by --repo-dir, clusters generators the cluster Secrets of
// --clusters (and the local cluster, in-cluster). Any failure (a bad
// manifest, a generator or template error, an invalid generated
// Application) prints nothing on stdout and exits 2.
func runAppSet(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "generate" {
		fmt.Fprintln(stderr, "usage: gitopsctl appset generate --appset FILE [--clusters FILE] [--repo-dir URL=DIR ...]")
		return 2
	}
	fs := flag.NewFlagSet("appset generate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	setFile := fs.String("appset", "", "file holding ApplicationSets (argoproj.io/v1alpha1)")
	clustersFile := fs.String("clusters", "", "file holding Argo CD cluster Secrets (argocd.argoproj.io/secret-type: cluster)")
	dirs := repoDirs{}
	fs.Var(dirs, "repo-dir", "serve a git generator's repoURL from a local folder: URL=DIR (repeatable)")
	if !parseFlags(fs, args[1:]) {
		return 2
	}
	if *setFile == "" {
		fmt.Fprintln(stderr, "gitopsctl appset generate: --appset is required")
		return 2
	}
	apps, err := generateAppSets(ctx, *setFile, *clustersFile, dirs)
	if err != nil {
		return fail(stderr, "appset generate", err)
	}
	var out bytes.Buffer
	for _, a := range apps {
		data, err := yaml.Marshal(a.Object)
		if err != nil {
			return fail(stderr, "appset generate", err)
		}
		out.WriteString("---\n")
		out.Write(data)
	}
	if _, err := stdout.Write(out.Bytes()); err != nil {
		return fail(stderr, "appset generate", err)
	}
	return 0
}

func generateAppSets(ctx context.Context, setFile, clustersFile string, dirs repoDirs) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(setFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sets, err := appset.Load(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", setFile, err)
	}
	opts := appset.DefaultOptions()
	opts.Repos = appset.DirRepos(dirs)
	opts.Validate = func(obj map[string]any) error {
		js, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		_, err = gitops.LoadApplications(bytes.NewReader(js))
		return err
	}
	if clustersFile != "" {
		data, err := os.ReadFile(clustersFile)
		if err != nil {
			return nil, err
		}
		objs, err := resource.Decode(clustersFile, data, resource.DefaultDecodeOptions())
		if err != nil {
			return nil, err
		}
		cls, err := appset.ClustersFromSecrets(objs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", clustersFile, err)
		}
		opts.Clusters = appset.StaticClusters(cls)
	}
	var all []*unstructured.Unstructured
	var errs []error
	for i := range sets {
		res, err := appset.Generate(ctx, &sets[i], opts)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		all = append(all, res.Applications...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].GetNamespace() != all[j].GetNamespace() {
			return all[i].GetNamespace() < all[j].GetNamespace()
		}
		return all[i].GetName() < all[j].GetName()
	})
	return all, nil
}
