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
	"github.com/kubegitops/gitops/appset/scm"
	"github.com/kubegitops/gitops/appset/scm/all"
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

// runAppSet prints the Applications the ApplicationSets of --appset
// generate, as a YAML stream sorted by namespace and name, without a
// cluster: git generators read the folders given by --repo-dir, clusters
// generators the cluster Secrets of --clusters (and the local cluster,
// in-cluster), plugin generators and tokenRefs the ConfigMaps and Secrets
// of --objects. scmProvider, pullRequest and plugin generators call their
// forge or plugin (Argo CD's providers, tokens from --objects);
// --offline refuses them, so nothing leaves the machine. Any failure (a
// bad manifest, a generator or template error, an invalid generated
// Application) prints nothing on stdout and exits 2.
func runAppSet(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "generate" {
		fmt.Fprintln(stderr, "usage: gitopsctl appset generate --appset FILE [--clusters FILE] [--objects FILE] [--repo-dir URL=DIR ...] [--namespace NS] [--offline]")
		return 2
	}
	fs := flag.NewFlagSet("appset generate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var in genInputs
	fs.StringVar(&in.setFile, "appset", "", "file holding ApplicationSets (argoproj.io/v1alpha1)")
	fs.StringVar(&in.clustersFile, "clusters", "", "file holding Argo CD cluster Secrets (argocd.argoproj.io/secret-type: cluster)")
	fs.StringVar(&in.objectsFile, "objects", "", "file holding the ConfigMaps and Secrets generators read: plugin ConfigMaps, argocd-secret, tokenRef Secrets")
	fs.StringVar(&in.namespace, "namespace", "argocd", "Argo CD's namespace: where plugin ConfigMaps and GitHub App Secrets are read, and the namespace of --objects manifests without one")
	fs.BoolVar(&in.offline, "offline", false, "refuse scmProvider, pullRequest and plugin generators instead of calling their forge or plugin")
	in.dirs = repoDirs{}
	fs.Var(in.dirs, "repo-dir", "serve a git generator's repoURL from a local folder: URL=DIR (repeatable)")
	if !parseFlags(fs, args[1:]) {
		return 2
	}
	if in.setFile == "" {
		fmt.Fprintln(stderr, "gitopsctl appset generate: --appset is required")
		return 2
	}
	apps, err := generateAppSets(ctx, in)
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

// genInputs are appset generate's flags.
type genInputs struct {
	setFile, clustersFile, objectsFile, namespace string
	dirs                                          repoDirs
	offline                                       bool
}

func decodeFile(name string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return resource.Decode(name, data, resource.DefaultDecodeOptions())
}

func generateAppSets(ctx context.Context, in genInputs) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(in.setFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sets, err := appset.Load(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.setFile, err)
	}
	opts := appset.DefaultOptions()
	opts.ControllerNamespace = in.namespace
	opts.Repos = appset.DirRepos(in.dirs)
	opts.Validate = func(obj map[string]any) error {
		js, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		_, err = gitops.LoadApplications(bytes.NewReader(js))
		return err
	}
	if in.clustersFile != "" {
		objs, err := decodeFile(in.clustersFile)
		if err != nil {
			return nil, err
		}
		cls, err := appset.ClustersFromSecrets(objs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.clustersFile, err)
		}
		opts.Clusters = appset.StaticClusters(cls)
	}
	if in.objectsFile != "" {
		objs, err := decodeFile(in.objectsFile)
		if err != nil {
			return nil, err
		}
		st, err := appset.ObjectsFromManifests(objs, in.namespace)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.objectsFile, err)
		}
		opts.Objects = st
	}
	if in.offline {
		opts.SCM.Disabled = true
		opts.Objects = nil // plugin generators: ErrNoProvider
	} else {
		all.Register(&opts, scm.Options{Objects: opts.Objects, ControllerNamespace: in.namespace})
	}
	var out []*unstructured.Unstructured
	var errs []error
	for i := range sets {
		res, err := appset.Generate(ctx, &sets[i], opts)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, res.Applications...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].GetNamespace() != out[j].GetNamespace() {
			return out[i].GetNamespace() < out[j].GetNamespace()
		}
		return out[i].GetName() < out[j].GetName()
	})
	return out, nil
}
