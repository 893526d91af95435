package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/bradleyfalzon/ghinstallation/v2"
	gh "github.com/google/go-github/v88/github"

	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/appset/scm"
)

// Key is the provider block's key in scmProvider and pullRequest
// generators.
const Key = "github"

// perPage is the page size asked of GitHub (its maximum).
const perPage = 100

// SCMConfig is the scmProvider generator's github block (Argo CD's
// SCMProviderGeneratorGithub).
type SCMConfig struct {
	// Organization is the organisation (or user) whose repositories are
	// listed. Required.
	Organization string `json:"organization"`
	// API is GitHub Enterprise's URL ("https://git.example.com/" or its
	// /api/v3/ form); empty: github.com.
	API string `json:"api,omitempty"`
	// TokenRef names the Secret key of a token (in the set's namespace).
	TokenRef *scm.SecretRef `json:"tokenRef,omitempty"`
	// AppSecretName names a repository-credentials Secret of a GitHub App
	// (githubAppID, githubAppInstallationID, githubAppPrivateKey,
	// githubAppEnterpriseBaseUrl) in the controller's namespace.
	AppSecretName string `json:"appSecretName,omitempty"`
	// AllBranches yields every branch of every repository, not only the
	// default one.
	AllBranches bool `json:"allBranches,omitempty"`
	// ExcludeArchivedRepos leaves archived repositories out.
	ExcludeArchivedRepos bool `json:"excludeArchivedRepos,omitempty"`
}

// PullRequestConfig is the pullRequest generator's github block (Argo
// CD's PullRequestGeneratorGithub).
type PullRequestConfig struct {
	// Owner and Repo name the repository. Required.
	Owner string `json:"owner"`
	Repo  string `json:"repo"`
	// API is GitHub Enterprise's URL; empty: github.com.
	API string `json:"api,omitempty"`
	// TokenRef names the Secret key of a token.
	TokenRef *scm.SecretRef `json:"tokenRef,omitempty"`
	// AppSecretName names a GitHub App's repository-credentials Secret.
	AppSecretName string `json:"appSecretName,omitempty"`
	// Labels keep the pull requests that carry all of them.
	Labels []string `json:"labels,omitempty"`
}

// Provider serves GitHub and GitHub Enterprise with go-github, for both
// generators.
type Provider struct {
	opts scm.Options
}

var (
	_ appset.SCMProvider         = (*Provider)(nil)
	_ appset.PullRequestProvider = (*Provider)(nil)
)

// New returns a GitHub provider.
func New(opts scm.Options) *Provider { return &Provider{opts: opts.WithDefaults()} }

// client builds a go-github client for one generator: a GitHub App's
// installation token, a tokenRef's token, or anonymous.
func (p *Provider) client(ctx context.Context, namespace, api string, tokenRef *scm.SecretRef, appSecret string) (*gh.Client, error) {
	hc, err := p.opts.HTTPClient(ctx, namespace, nil, false)
	if err != nil {
		return nil, err
	}
	var opts []gh.ClientOptionsFunc
	switch {
	case appSecret != "":
		tr, err := p.appTransport(ctx, appSecret, api, hc.Transport)
		if err != nil {
			return nil, err
		}
		hc.Transport = tr
	default:
		token, err := p.opts.SecretValue(ctx, namespace, tokenRef)
		if err != nil {
			return nil, err
		}
		if token != "" {
			opts = append(opts, gh.WithAuthToken(token))
		}
	}
	opts = append(opts, gh.WithHTTPClient(hc))
	if api != "" {
		opts = append(opts, gh.WithEnterpriseURLs(api, api))
	}
	return gh.NewClient(opts...)
}

// appTransport authenticates as a GitHub App installation
// (ghinstallation), from the App's repository-credentials Secret.
func (p *Provider) appTransport(ctx context.Context, name, api string, base http.RoundTripper) (http.RoundTripper, error) {
	ns := p.opts.ControllerNamespace
	if p.opts.Objects == nil {
		return nil, fmt.Errorf("appSecretName %s/%s: no cluster to read it from", ns, name)
	}
	s, err := p.opts.Objects.Secret(ctx, ns, name)
	if err != nil {
		return nil, fmt.Errorf("appSecretName %s/%s: %w", ns, name, err)
	}
	num := func(key string) (int64, error) {
		n, err := strconv.ParseInt(string(s.Data[key]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("appSecretName %s/%s: %s: want a number", ns, name, key)
		}
		return n, nil
	}
	appID, err := num("githubAppID")
	if err != nil {
		return nil, err
	}
	instID, err := num("githubAppInstallationID")
	if err != nil {
		return nil, err
	}
	key := s.Data["githubAppPrivateKey"]
	if len(key) == 0 {
		return nil, fmt.Errorf("appSecretName %s/%s: githubAppPrivateKey is missing", ns, name)
	}
	tr, err := ghinstallation.New(base, appID, instID, key)
	if err != nil {
		// ghinstallation's error names the key's form, never the key.
		return nil, fmt.Errorf("appSecretName %s/%s: githubAppPrivateKey: %w", ns, name, err)
	}
	enterpriseURL := string(s.Data["githubAppEnterpriseBaseUrl"])
	if enterpriseURL == "" {
		enterpriseURL = api
	}
	if enterpriseURL != "" {
		c, err := gh.NewClient(gh.WithEnterpriseURLs(enterpriseURL, enterpriseURL))
		if err != nil {
			return nil, fmt.Errorf("appSecretName %s/%s: githubAppEnterpriseBaseUrl: %w", ns, name, err)
		}
		tr.BaseURL = trimSlash(c.BaseURL())
	}
	return tr, nil
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}

// Open implements appset.SCMProvider.
func (p *Provider) Open(ctx context.Context, req appset.SCMRequest) (appset.SCMService, error) {
	var cfg SCMConfig
	if err := scm.Decode(Key, req.Config, &cfg); err != nil {
		return nil, err
	}
	if err := scm.Required(Key, map[string]string{"organization": cfg.Organization}); err != nil {
		return nil, err
	}
	if _, err := scm.CloneURL(req.CloneProtocol, "ssh", "", ""); err != nil {
		return nil, err
	}
	c, err := p.client(ctx, req.Namespace, cfg.API, cfg.TokenRef, cfg.AppSecretName)
	if err != nil {
		return nil, err
	}
	return &service{c: c, cfg: cfg, protocol: req.CloneProtocol}, nil
}

// service is one organisation.
type service struct {
	c        *gh.Client
	cfg      SCMConfig
	protocol string
}

// Repositories lists the organisation's repositories, page by page (Link
// headers), with their topics as labels.
func (s *service) Repositories(ctx context.Context) ([]appset.SCMRepository, error) {
	opt := &gh.RepositoryListByOrgOptions{ListOptions: gh.ListOptions{PerPage: perPage}}
	var out []appset.SCMRepository
	for {
		repos, resp, err := s.c.Repositories.ListByOrg(ctx, s.cfg.Organization, opt)
		if err != nil {
			return nil, fmt.Errorf("list repositories of %s: %w", s.cfg.Organization, wrap(resp, err))
		}
		for _, r := range repos {
			if s.cfg.ExcludeArchivedRepos && r.GetArchived() {
				continue
			}
			u, err := scm.CloneURL(s.protocol, "ssh", r.GetSSHURL(), r.GetCloneURL())
			if err != nil {
				return nil, err
			}
			out = append(out, appset.SCMRepository{Organization: r.GetOwner().GetLogin(), Repository: r.GetName(), URL: u,
				Branch: r.GetDefaultBranch(), Labels: r.Topics, RepositoryID: strconv.FormatInt(r.GetID(), 10)})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
}

// Branches returns the default branch (none for an empty repository), or
// every branch under allBranches.
func (s *service) Branches(ctx context.Context, repo appset.SCMRepository) ([]appset.SCMRepository, error) {
	at := func(b *gh.Branch) appset.SCMRepository {
		r := repo
		r.Branch, r.SHA = b.GetName(), b.GetCommit().GetSHA()
		return r
	}
	if !s.cfg.AllBranches {
		b, resp, err := s.c.Repositories.GetBranch(ctx, repo.Organization, repo.Repository, repo.Branch, 0)
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			return nil, nil // no default branch: an empty repository
		}
		if err != nil {
			return nil, wrap(resp, err)
		}
		return []appset.SCMRepository{at(b)}, nil
	}
	opt := &gh.BranchListOptions{ListOptions: gh.ListOptions{PerPage: perPage}}
	var out []appset.SCMRepository
	for {
		bs, resp, err := s.c.Repositories.ListBranches(ctx, repo.Organization, repo.Repository, opt)
		if err != nil {
			return nil, wrap(resp, err)
		}
		for _, b := range bs {
			out = append(out, at(b))
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
}

// HasPath asks for the path's contents at the branch; 404 is false.
func (s *service) HasPath(ctx context.Context, repo appset.SCMRepository, path string) (bool, error) {
	_, _, resp, err := s.c.Repositories.GetContents(ctx, repo.Organization, repo.Repository, path, &gh.RepositoryContentGetOptions{Ref: repo.Branch})
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return false, nil
	}
	if err != nil {
		return false, wrap(resp, err)
	}
	return true, nil
}

// PullRequests implements appset.PullRequestProvider: the open pull
// requests of the repository carrying every label of the config.
func (p *Provider) PullRequests(ctx context.Context, req appset.PullRequestRequest) ([]appset.PullRequest, error) {
	var cfg PullRequestConfig
	if err := scm.Decode(Key, req.Config, &cfg); err != nil {
		return nil, err
	}
	if err := scm.Required(Key, map[string]string{"owner": cfg.Owner, "repo": cfg.Repo}); err != nil {
		return nil, err
	}
	c, err := p.client(ctx, req.Namespace, cfg.API, cfg.TokenRef, cfg.AppSecretName)
	if err != nil {
		return nil, err
	}
	opt := &gh.PullRequestListOptions{State: "open", ListOptions: gh.ListOptions{PerPage: perPage}}
	var out []appset.PullRequest
	for {
		prs, resp, err := c.PullRequests.List(ctx, cfg.Owner, cfg.Repo, opt)
		if err != nil {
			return nil, fmt.Errorf("list pull requests of %s/%s: %w", cfg.Owner, cfg.Repo, wrap(resp, err))
		}
		for _, pr := range prs {
			var labels []string
			for _, l := range pr.Labels {
				labels = append(labels, l.GetName())
			}
			if !scm.HasAll(labels, cfg.Labels) {
				continue
			}
			out = append(out, appset.PullRequest{Number: pr.GetNumber(), Title: pr.GetTitle(), Branch: pr.GetHead().GetRef(),
				TargetBranch: pr.GetBase().GetRef(), HeadSHA: pr.GetHead().GetSHA(), Author: pr.GetUser().GetLogin(), Labels: labels})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
}

// wrap marks a 404 as appset.ErrRepositoryNotFound and keeps go-github's
// error (which names the URL, never the token).
func wrap(resp *gh.Response, err error) error {
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%w: %w", appset.ErrRepositoryNotFound, err)
	}
	var rle *scm.RateLimitError
	if errors.As(err, &rle) {
		return rle
	}
	return err
}
