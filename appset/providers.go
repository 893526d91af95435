package appset

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// SCMRepository is one repository an SCM provider reports.
type SCMRepository struct {
	Organization string
	Repository   string
	URL          string
	Branch       string
	SHA          string
	Labels       []string
	RepositoryID string
}

// SCMProvider lists the repositories of an organisation for scmProvider
// generators. config is the generator's provider block (its "github:",
// "gitlab:" ... object) unchanged. A host plugs in its own (with its
// credentials and timeouts); this package has no network provider.
type SCMProvider interface {
	Repositories(ctx context.Context, config json.RawMessage) ([]SCMRepository, error)
	// HasPath reports whether a repository's branch has a path (for the
	// pathsExist and pathsDoNotExist filters).
	HasPath(ctx context.Context, config json.RawMessage, repo SCMRepository, path string) (bool, error)
}

// PullRequest is one open pull request a provider reports.
type PullRequest struct {
	Number       int
	Title        string
	Branch       string
	TargetBranch string
	HeadSHA      string
	Author       string
	Labels       []string
}

// PullRequestProvider lists open pull requests for pullRequest
// generators; config is the generator's provider block unchanged.
type PullRequestProvider interface {
	PullRequests(ctx context.Context, config json.RawMessage) ([]PullRequest, error)
}

// StaticSCM is an SCMProvider serving a fixed list (for tests and
// offline runs); HasPath answers from Paths ("org/repo/branch" -> paths).
type StaticSCM struct {
	Repos []SCMRepository
	Paths map[string][]string
}

// Repositories returns s.Repos.
func (s StaticSCM) Repositories(context.Context, json.RawMessage) ([]SCMRepository, error) {
	return s.Repos, nil
}

// HasPath looks path up in s.Paths.
func (s StaticSCM) HasPath(_ context.Context, _ json.RawMessage, r SCMRepository, path string) (bool, error) {
	for _, p := range s.Paths[r.Organization+"/"+r.Repository+"/"+r.Branch] {
		if p == path {
			return true, nil
		}
	}
	return false, nil
}

// StaticPullRequests is a PullRequestProvider serving a fixed list.
type StaticPullRequests []PullRequest

// PullRequests returns the list.
func (s StaticPullRequests) PullRequests(context.Context, json.RawMessage) ([]PullRequest, error) {
	return s, nil
}

// providerKey returns the one provider block set, by its key.
func providerKey(blocks map[string]json.RawMessage) (string, json.RawMessage, error) {
	var key string
	var cfg json.RawMessage
	for k, v := range blocks {
		if len(v) == 0 {
			continue
		}
		if key != "" {
			return "", nil, fmt.Errorf("two providers set: %s and %s", key, k)
		}
		key, cfg = k, v
	}
	if key == "" {
		return "", nil, fmt.Errorf("no provider set")
	}
	return key, cfg, nil
}

// scmProvider yields a set per repository that passes a filter (any
// filter: filters are ORed, the fields of one ANDed, as in Argo CD):
// organization, repository, url, branch, branchNormalized, sha,
// short_sha, short_sha_7, labels, repository_id and values.
func (c *genCtx) scmProvider(ctx context.Context, g *SCMProviderGenerator) ([]Params, error) {
	key, cfg, err := providerKey(map[string]json.RawMessage{"github": g.Github, "gitlab": g.Gitlab, "gitea": g.Gitea,
		"bitbucket": g.Bitbucket, "bitbucketServer": g.BitbucketServer, "azureDevOps": g.AzureDevOps, "awsCodeCommit": g.AWSCodeCommit})
	if err != nil {
		return nil, err
	}
	prov, ok := c.r.opts.SCMProviders[key]
	if !ok {
		return nil, fmt.Errorf("%w: scmProvider %q is not registered by the host", ErrNoProvider, key)
	}
	repos, err := prov.Repositories(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("scmProvider %s: %w", key, err)
	}
	var out []Params
	for _, r := range repos {
		ok, err := c.scmPasses(ctx, prov, cfg, g.Filters, r)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		p := Params{"organization": r.Organization, "repository": r.Repository, "url": r.URL, "branch": r.Branch,
			"branchNormalized": SanitizeName(r.Branch), "sha": r.SHA, "short_sha": short(r.SHA, 8), "short_sha_7": short(r.SHA, 7),
			"labels": strings.Join(r.Labels, ","), "repository_id": r.RepositoryID}
		if err := c.addValues(p, g.Values); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func (c *genCtx) scmPasses(ctx context.Context, prov SCMProvider, cfg json.RawMessage, filters []SCMProviderFilter, r SCMRepository) (bool, error) {
	if len(filters) == 0 {
		return true, nil
	}
	for _, f := range filters {
		ok := true
		for _, m := range []struct {
			re  *string
			val []string
		}{{f.RepositoryMatch, []string{r.Repository}}, {f.BranchMatch, []string{r.Branch}}, {f.LabelMatch, r.Labels}} {
			if m.re == nil {
				continue
			}
			re, err := regexp.Compile(*m.re)
			if err != nil {
				return false, fmt.Errorf("filters: %w", err)
			}
			any := false
			for _, v := range m.val {
				any = any || re.MatchString(v)
			}
			ok = ok && any
		}
		for _, p := range f.PathsExist {
			has, err := prov.HasPath(ctx, cfg, r, p)
			if err != nil {
				return false, err
			}
			ok = ok && has
		}
		for _, p := range f.PathsDoNotExist {
			has, err := prov.HasPath(ctx, cfg, r, p)
			if err != nil {
				return false, err
			}
			ok = ok && !has
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}

func short(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// pullRequest yields a set per pull request passing a filter: number,
// title, branch, branch_slug, target_branch, target_branch_slug,
// head_sha, head_short_sha, head_short_sha_7, author and labels.
func (c *genCtx) pullRequest(ctx context.Context, g *PullRequestGenerator) ([]Params, error) {
	key, cfg, err := providerKey(map[string]json.RawMessage{"github": g.Github, "gitlab": g.Gitlab, "gitea": g.Gitea,
		"bitbucket": g.Bitbucket, "bitbucketServer": g.BitbucketServer, "azureDevOps": g.AzureDevOps})
	if err != nil {
		return nil, err
	}
	prov, ok := c.r.opts.PullRequestProviders[key]
	if !ok {
		return nil, fmt.Errorf("%w: pullRequest provider %q is not registered by the host", ErrNoProvider, key)
	}
	prs, err := prov.PullRequests(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pullRequest %s: %w", key, err)
	}
	var out []Params
	for _, pr := range prs {
		ok, err := prPasses(g.Filters, pr)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		p := Params{"number": strconv.Itoa(pr.Number), "title": pr.Title, "branch": pr.Branch, "branch_slug": slug(pr.Branch),
			"target_branch": pr.TargetBranch, "target_branch_slug": slug(pr.TargetBranch), "head_sha": pr.HeadSHA,
			"head_short_sha": short(pr.HeadSHA, 8), "head_short_sha_7": short(pr.HeadSHA, 7), "author": pr.Author}
		if c.tmpl.goTemplate {
			p["labels"] = toAny(pr.Labels)
		} else {
			p["labels"] = strings.Join(pr.Labels, ",")
		}
		out = append(out, p)
	}
	return out, nil
}

func slug(s string) string { v, _ := slugify(s); return v }

func prPasses(filters []PullRequestFilter, pr PullRequest) (bool, error) {
	if len(filters) == 0 {
		return true, nil
	}
	for _, f := range filters {
		ok := true
		for _, m := range []struct {
			re  *string
			val string
		}{{f.BranchMatch, pr.Branch}, {f.TargetBranchMatch, pr.TargetBranch}} {
			if m.re == nil {
				continue
			}
			re, err := regexp.Compile(*m.re)
			if err != nil {
				return false, fmt.Errorf("filters: %w", err)
			}
			ok = ok && re.MatchString(m.val)
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}

// DecisionReader reads what clusterDecisionResource generators need from
// the cluster Argo CD runs in: the ConfigMap that names the duck type,
// and the resources of that type.
type DecisionReader interface {
	// ConfigMap returns the data of a ConfigMap in the controller's
	// namespace.
	ConfigMap(ctx context.Context, name string) (map[string]string, error)
	// List returns the objects of apiVersion and kind with name (when not
	// empty) matching selector.
	List(ctx context.Context, apiVersion, kind, name string, selector labels.Selector) ([]*unstructured.Unstructured, error)
}

// clusterDecisionResource reads the duck type from the ConfigMap
// (apiVersion, kind, statusListKey, matchKey), lists its resources and
// yields a set per entry of their status.<statusListKey> list whose
// matchKey names a known cluster: the entry's string fields, name,
// server (of that cluster) and values.
func (c *genCtx) clusterDecisionResource(ctx context.Context, g *ClusterDecisionResourceGenerator) ([]Params, error) {
	dr := c.r.opts.Decisions
	if dr == nil {
		return nil, fmt.Errorf("%w: no cluster to read clusterDecisionResource from", ErrNoProvider)
	}
	cm, err := dr.ConfigMap(ctx, g.ConfigMapRef)
	if err != nil {
		return nil, fmt.Errorf("configMapRef %s: %w", g.ConfigMapRef, err)
	}
	for _, k := range []string{"apiVersion", "kind", "statusListKey", "matchKey"} {
		if cm[k] == "" {
			return nil, fmt.Errorf("configMapRef %s: data.%s is missing", g.ConfigMapRef, k)
		}
	}
	if g.Name == "" && len(g.LabelSelector.MatchLabels) == 0 && len(g.LabelSelector.MatchExpressions) == 0 {
		return nil, fmt.Errorf("clusterDecisionResource needs a name or a labelSelector")
	}
	sel, err := metav1.LabelSelectorAsSelector(&g.LabelSelector)
	if err != nil {
		return nil, fmt.Errorf("labelSelector: %w", err)
	}
	objs, err := dr.List(ctx, cm["apiVersion"], cm["kind"], g.Name, sel)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", cm["apiVersion"], cm["kind"], err)
	}
	servers := map[string]string{}
	if c.r.opts.Clusters != nil {
		cls, err := c.r.opts.Clusters.Clusters(ctx)
		if err != nil {
			return nil, err
		}
		for _, cl := range cls {
			servers[cl.Name] = cl.Server
		}
	}
	if l := c.r.opts.LocalCluster; l != nil {
		if _, ok := servers[l.Name]; !ok {
			servers[l.Name] = l.Server
		}
	}
	var out []Params
	for _, o := range objs {
		list, _, _ := unstructured.NestedSlice(o.Object, "status", cm["statusListKey"])
		for _, el := range list {
			m, ok := el.(map[string]any)
			if !ok {
				continue
			}
			name, _ := m[cm["matchKey"]].(string)
			server, known := servers[name]
			if !known {
				continue // Argo CD skips decisions for unknown clusters
			}
			p := Params{}
			for k, v := range m {
				if s, ok := v.(string); ok {
					p[k] = s
				}
			}
			p["name"], p["server"] = name, server
			if err := c.addValues(p, g.Values); err != nil {
				return nil, err
			}
			out = append(out, p)
		}
	}
	return out, nil
}
