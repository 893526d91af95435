package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/preview"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/git"
	"github.com/kubegitops/gitops/source/repocreds"
)

// runPreview is `gitopsctl preview`: what moving --repo from --base to
// --head does to every app, as Markdown for a pull-request comment or
// JSON. Exit 0: no change; 1: changes; 2: an error, a render failing at
// head, or a policy refusing an object.
func runPreview(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("preview", flag.ContinueOnError)
	fs.SetOutput(stderr)
	repoFlag := fs.String("repo", "", "the repository: a Git URL, or a local clone (DIR)")
	repoURL := fs.String("repo-url", "", "the URL the Applications name the repository by (default: --repo; for a clone its origin, or the clone's folder when it has none)")
	base := fs.String("base", "", "the revision the change starts from (a branch, tag or commit)")
	head := fs.String("head", "", "the revision with the change")
	branch := fs.String("branch", "", "the branch the change goes to, when --base is a commit (default: --base)")
	var apps stringList
	fs.Var(&apps, "apps", "file or folder of Application, ApplicationSet and AppProject manifests; a path in the repository is read at each side (repeatable)")
	kubeconfig := fs.String("kubeconfig", "", "compare the head render with the cluster of this kubeconfig too")
	kubeContext := fs.String("context", "", "kubeconfig context (default: the current one)")
	format := fs.String("format", "markdown", "output: markdown or json")
	maxBytes := fs.Int("max-bytes", preview.DefaultMarkdownLimit, "bound of the Markdown output")
	projects := fs.String("projects", "", "YAML file of AppProjects the apps name")
	policy := fs.String("policy", "", "YAML file of a CEL policy: name, rules (name, kinds, expression, message)")
	var off offlineFlags
	off.register(fs)
	repositories := fs.String("repositories", "", "YAML file of Argo CD repository Secrets (secret-type repository / repo-creds) and argocd-tls-certs-cm")
	if !parseFlags(fs, args) {
		return 2
	}
	if *repoFlag == "" || *base == "" || *head == "" || len(apps) == 0 {
		fmt.Fprintln(stderr, "usage: gitopsctl preview --repo URL|DIR --base REF --head REF --apps FILE|DIR [--kubeconfig FILE] [--format markdown|json]")
		return 2
	}
	if *format != "markdown" && *format != "json" {
		return fail(stderr, "preview", fmt.Errorf("--format %q: want markdown or json", *format))
	}
	opts := preview.DefaultOptions()
	opts.Log = stderrLogger(stderr, false)
	opts.Base, opts.Head, opts.Branch, opts.Apps = *base, *head, *branch, apps
	opts.KubeVersion, opts.APIVersions = off.kubeVersion, off.apiVersions
	if opts.Branch == "" {
		opts.Branch = *base
	}
	if err := previewRepo(&opts, *repoFlag, *repoURL, *repositories); err != nil {
		return fail(stderr, "preview", err)
	}
	if *projects != "" {
		data, err := os.ReadFile(*projects)
		if err != nil {
			return fail(stderr, "preview", err)
		}
		if opts.Projects, err = gitops.LoadProjects(bytes.NewReader(data)); err != nil {
			return fail(stderr, "preview", fmt.Errorf("%s: %w", *projects, err))
		}
	}
	if *policy != "" {
		p, err := loadCELPolicy(*policy)
		if err != nil {
			return fail(stderr, "preview", err)
		}
		opts.Policies = []gitops.Policy{p}
	}
	if *kubeconfig != "" {
		cf := clusterFlags{kubeconfig: *kubeconfig, context: *kubeContext}
		cfg, err := cf.restConfig()
		if err != nil {
			return fail(stderr, "preview", err)
		}
		opts.Live = &preview.LiveOptions{Clusters: engineOptions(cfg, opts.Log).Clusters, Config: cfg}
	}
	rep, err := preview.Run(ctx, opts)
	if err != nil {
		return fail(stderr, "preview", err)
	}
	if *format == "json" {
		err = rep.WriteJSON(stdout)
	} else {
		_, err = io.WriteString(stdout, rep.Markdown(*maxBytes))
	}
	if err != nil {
		return fail(stderr, "preview", err)
	}
	return rep.ExitCode()
}

// previewRepo sets the source of --repo: a Git server for a URL, the
// clone itself for a folder.
func previewRepo(opts *preview.Options, repo, repoURL, repositories string) error {
	var creds func(string) *source.Credentials
	if repositories != "" {
		st, err := repocreds.LoadFile(repositories)
		if err != nil {
			return err
		}
		creds = st.For
		opts.Credentials = creds
	}
	if info, err := os.Stat(repo); err == nil && info.IsDir() {
		src, err := git.OpenLocal(repo)
		if err != nil {
			return err
		}
		opts.Source = src
		opts.Repository = source.Repository{URL: repo}
		if repoURL == "" {
			if repoURL, err = cloneURL(repo); err != nil {
				return err
			}
		}
		opts.RepoURL = repoURL
		return nil
	}
	g, err := git.New(git.DefaultOptions())
	if err != nil {
		return err
	}
	opts.Source = g
	opts.Repository = source.Repository{URL: repo}
	if creds != nil {
		opts.Repository.Credentials = creds(repo)
	}
	opts.RepoURL = repoURL
	return nil
}

// cloneURL is the URL a clone's apps name it by: its origin remote, or,
// for a clone without one, the folder itself (the top of the work tree,
// as an absolute path; preview matches it by path or file:// URL).
func cloneURL(dir string) (string, error) {
	r, err := gogit.PlainOpenWithOptions(dir, &gogit.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	rem, err := r.Remote("origin")
	if err == nil && len(rem.Config().URLs) > 0 {
		return rem.Config().URLs[0], nil
	}
	if err != nil && !errors.Is(err, gogit.ErrRemoteNotFound) {
		return "", fmt.Errorf("%s: origin remote: %w", dir, err)
	}
	wt, err := r.Worktree()
	if err != nil {
		return "", fmt.Errorf("%s has no origin remote and no work tree: give the URL the Applications use with --repo-url", dir)
	}
	return filepath.Abs(wt.Filesystem.Root())
}

// celPolicyFile is the --policy file.
type celPolicyFile struct {
	Name  string `json:"name"`
	Rules []struct {
		Name       string   `json:"name"`
		Kinds      []string `json:"kinds"`
		Expression string   `json:"expression"`
		Message    string   `json:"message"`
	} `json:"rules"`
}

func loadCELPolicy(file string) (*gitops.CELPolicy, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var f celPolicyFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if f.Name == "" {
		f.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	rules := make([]gitops.CELRule, 0, len(f.Rules))
	for _, r := range f.Rules {
		rules = append(rules, gitops.CELRule{Name: r.Name, Kinds: r.Kinds, Expression: r.Expression, Message: r.Message})
	}
	p, err := gitops.NewCELPolicy(f.Name, rules...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return p, nil
}
