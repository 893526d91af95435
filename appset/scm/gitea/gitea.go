package gitea

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	sdk "code.gitea.io/sdk/gitea"

	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/appset/scm"
)

// Key is the provider block's key in scmProvider and pullRequest
// generators.
const Key = "gitea"

// pageSize is the page size asked of Gitea (its default
// MAX_RESPONSE_ITEMS is 50).
const pageSize = 50

// SCMConfig is the scmProvider generator's gitea block (Argo CD's
// SCMProviderGeneratorGitea).
type SCMConfig struct {
	// Owner is the organisation (or user) whose repositories are listed.
	// Required.
	Owner string `json:"owner"`
	// API is the Gitea server's URL. Required.
	API string `json:"api"`
	// TokenRef names the Secret key of an access token.
	TokenRef *scm.SecretRef `json:"tokenRef,omitempty"`
	// AllBranches yields every branch, not only the default one.
	AllBranches bool `json:"allBranches,omitempty"`
	// Insecure skips the verification of the server's certificate.
	Insecure bool `json:"insecure,omitempty"`
	// ExcludeArchivedRepos leaves archived repositories out.
	ExcludeArchivedRepos bool `json:"excludeArchivedRepos,omitempty"`
}

// PullRequestConfig is the pullRequest generator's gitea block (Argo CD's
// PullRequestGeneratorGitea).
type PullRequestConfig struct {
	// Owner and Repo name the repository. Required.
	Owner string `json:"owner"`
	Repo  string `json:"repo"`
	// API is the Gitea server's URL. Required.
	API string `json:"api"`
	// TokenRef names the Secret key of an access token.
	TokenRef *scm.SecretRef `json:"tokenRef,omitempty"`
	// Insecure skips the verification of the server's certificate.
	Insecure bool `json:"insecure,omitempty"`
	// Labels keep the pull requests that carry all of them.
	Labels []string `json:"labels,omitempty"`
}

// Provider serves Gitea (and Forgejo, which answers the same API) with
// Gitea's Go SDK, for both generators.
type Provider struct{ opts scm.Options }

var (
	_ appset.SCMProvider         = (*Provider)(nil)
	_ appset.PullRequestProvider = (*Provider)(nil)
)

// New returns a Gitea provider.
func New(opts scm.Options) *Provider { return &Provider{opts: opts.WithDefaults()} }

func (p *Provider) client(ctx context.Context, namespace, api string, tokenRef *scm.SecretRef, insecure bool) (*sdk.Client, error) {
	hc, err := p.opts.HTTPClient(ctx, namespace, nil, insecure)
	if err != nil {
		return nil, err
	}
	token, err := p.opts.SecretValue(ctx, namespace, tokenRef)
	if err != nil {
		return nil, err
	}
	opts := []sdk.ClientOption{sdk.SetHTTPClient(hc), sdk.SetContext(ctx)}
	if token != "" {
		opts = append(opts, sdk.SetToken(token))
	}
	c, err := sdk.NewClient(api, opts...)
	if err != nil {
		return nil, fmt.Errorf("gitea %s: %w", api, err)
	}
	return c, nil
}

// Open implements appset.SCMProvider.
func (p *Provider) Open(ctx context.Context, req appset.SCMRequest) (appset.SCMService, error) {
	var cfg SCMConfig
	if err := scm.Decode(Key, req.Config, &cfg); err != nil {
		return nil, err
	}
	if err := scm.Required(Key, map[string]string{"owner": cfg.Owner, "api": cfg.API}); err != nil {
		return nil, err
	}
	if _, err := scm.CloneURL(req.CloneProtocol, "ssh", "", ""); err != nil {
		return nil, err
	}
	c, err := p.client(ctx, req.Namespace, cfg.API, cfg.TokenRef, cfg.Insecure)
	if err != nil {
		return nil, err
	}
	return &service{c: c, cfg: cfg, protocol: req.CloneProtocol}, nil
}

type service struct {
	c        *sdk.Client
	cfg      SCMConfig
	protocol string
}

// Repositories lists the owner's repositories page by page, with the
// repository's issue labels as labels (Argo CD's choice for Gitea) and
// the web URL as the https clone URL.
func (s *service) Repositories(ctx context.Context) ([]appset.SCMRepository, error) {
	s.c.SetContext(ctx)
	var out []appset.SCMRepository
	for page := 1; ; page++ {
		repos, resp, err := s.c.ListOrgRepos(s.cfg.Owner, sdk.ListOrgReposOptions{ListOptions: sdk.ListOptions{Page: page, PageSize: pageSize}})
		if err != nil {
			return nil, fmt.Errorf("list repositories of %s: %w", s.cfg.Owner, wrap(resp, err))
		}
		for _, r := range repos {
			if s.cfg.ExcludeArchivedRepos && r.Archived {
				continue
			}
			labels, err := s.labels(r.Name)
			if err != nil {
				return nil, err
			}
			u, err := scm.CloneURL(s.protocol, "ssh", r.SSHURL, r.HTMLURL)
			if err != nil {
				return nil, err
			}
			out = append(out, appset.SCMRepository{Organization: s.cfg.Owner, Repository: r.Name, URL: u, Branch: r.DefaultBranch,
				Labels: labels, RepositoryID: strconv.FormatInt(r.ID, 10)})
		}
		if !more(resp, len(repos)) {
			return out, nil
		}
	}
}

func (s *service) labels(repo string) ([]string, error) {
	var out []string
	for page := 1; ; page++ {
		ls, resp, err := s.c.ListRepoLabels(s.cfg.Owner, repo, sdk.ListLabelsOptions{ListOptions: sdk.ListOptions{Page: page, PageSize: pageSize}})
		if err != nil {
			return nil, fmt.Errorf("labels of %s/%s: %w", s.cfg.Owner, repo, wrap(resp, err))
		}
		for _, l := range ls {
			out = append(out, l.Name)
		}
		if !more(resp, len(ls)) {
			return out, nil
		}
	}
}

// more reports whether another page follows: Gitea's Link header names
// it.
func more(resp *sdk.Response, n int) bool {
	return resp != nil && resp.NextPage > 0 && n > 0
}

// Branches returns the default branch, or every branch under allBranches.
func (s *service) Branches(ctx context.Context, repo appset.SCMRepository) ([]appset.SCMRepository, error) {
	s.c.SetContext(ctx)
	at := func(b *sdk.Branch) appset.SCMRepository {
		r := repo
		r.Branch = b.Name
		if b.Commit != nil {
			r.SHA = b.Commit.ID
		}
		return r
	}
	if !s.cfg.AllBranches {
		b, resp, err := s.c.GetRepoBranch(s.cfg.Owner, repo.Repository, repo.Branch)
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			return nil, nil // no default branch yet: an empty repository
		}
		if err != nil {
			return nil, fmt.Errorf("branch %s of %s/%s: %w", repo.Branch, s.cfg.Owner, repo.Repository, wrap(resp, err))
		}
		return []appset.SCMRepository{at(b)}, nil
	}
	var out []appset.SCMRepository
	for page := 1; ; page++ {
		bs, resp, err := s.c.ListRepoBranches(s.cfg.Owner, repo.Repository, sdk.ListRepoBranchesOptions{ListOptions: sdk.ListOptions{Page: page, PageSize: pageSize}})
		if err != nil {
			return nil, fmt.Errorf("branches of %s/%s: %w", s.cfg.Owner, repo.Repository, wrap(resp, err))
		}
		for _, b := range bs {
			out = append(out, at(b))
		}
		if !more(resp, len(bs)) {
			return out, nil
		}
	}
}

// HasPath asks for the path's contents at the branch; 404 is false, a
// directory is true.
func (s *service) HasPath(ctx context.Context, repo appset.SCMRepository, path string) (bool, error) {
	s.c.SetContext(ctx)
	_, resp, err := s.c.ListContents(s.cfg.Owner, repo.Repository, repo.Branch, path)
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return false, nil
	}
	if resp != nil && resp.StatusCode == http.StatusOK {
		return true, nil // a file ("expect directory, got file") or a directory
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
	if err := scm.Required(Key, map[string]string{"owner": cfg.Owner, "repo": cfg.Repo, "api": cfg.API}); err != nil {
		return nil, err
	}
	c, err := p.client(ctx, req.Namespace, cfg.API, cfg.TokenRef, cfg.Insecure)
	if err != nil {
		return nil, err
	}
	var out []appset.PullRequest
	for page := 1; ; page++ {
		prs, resp, err := c.ListRepoPullRequests(cfg.Owner, cfg.Repo, sdk.ListPullRequestsOptions{State: sdk.StateOpen, ListOptions: sdk.ListOptions{Page: page, PageSize: pageSize}})
		if err != nil {
			return nil, fmt.Errorf("list pull requests of %s/%s: %w", cfg.Owner, cfg.Repo, wrap(resp, err))
		}
		for _, pr := range prs {
			var labels []string
			for _, l := range pr.Labels {
				labels = append(labels, l.Name)
			}
			if !scm.HasAll(labels, cfg.Labels) {
				continue
			}
			x := appset.PullRequest{Number: int(pr.Index), Title: pr.Title, Labels: labels}
			if pr.Head != nil {
				x.Branch, x.HeadSHA = pr.Head.Ref, pr.Head.Sha
			}
			if pr.Base != nil {
				x.TargetBranch = pr.Base.Ref
			}
			if pr.Poster != nil {
				x.Author = pr.Poster.UserName
			}
			out = append(out, x)
		}
		if !more(resp, len(prs)) {
			return out, nil
		}
	}
}

// wrap marks a 404 as appset.ErrRepositoryNotFound.
func wrap(resp *sdk.Response, err error) error {
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%w: %w", appset.ErrRepositoryNotFound, err)
	}
	return err
}
