package gitlab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	gl "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/appset/scm"
)

// Key is the provider block's key in scmProvider and pullRequest
// generators.
const Key = "gitlab"

// perPage is the page size asked of GitLab (its maximum).
const perPage = 100

// SCMConfig is the scmProvider generator's gitlab block (Argo CD's
// SCMProviderGeneratorGitlab).
type SCMConfig struct {
	// Group is the group (id or full path) whose projects are listed.
	// Required.
	Group string `json:"group"`
	// IncludeSubgroups lists the projects of its subgroups too.
	IncludeSubgroups bool `json:"includeSubgroups,omitempty"`
	// API is a self-managed GitLab's URL; empty: gitlab.com.
	API string `json:"api,omitempty"`
	// TokenRef names the Secret key of an access token.
	TokenRef *scm.SecretRef `json:"tokenRef,omitempty"`
	// AllBranches yields every branch, not only the default one.
	AllBranches bool `json:"allBranches,omitempty"`
	// Insecure skips the verification of the server's certificate.
	Insecure bool `json:"insecure,omitempty"`
	// IncludeSharedProjects lists projects shared with the group too.
	// Default true, as in Argo CD.
	IncludeSharedProjects *bool `json:"includeSharedProjects,omitempty"`
	// Topic keeps the projects with this topic.
	Topic string `json:"topic,omitempty"`
	// CARef names a ConfigMap key of PEM certificates to trust.
	CARef *scm.ConfigMapKeyRef `json:"caRef,omitempty"`
	// IncludeArchivedRepos lists archived projects too.
	IncludeArchivedRepos bool `json:"includeArchivedRepos,omitempty"`
}

// PullRequestConfig is the pullRequest generator's gitlab block (Argo
// CD's PullRequestGeneratorGitLab).
type PullRequestConfig struct {
	// Project is the project's id or full path. Required.
	Project string `json:"project"`
	// API is a self-managed GitLab's URL; empty: gitlab.com.
	API string `json:"api,omitempty"`
	// TokenRef names the Secret key of an access token.
	TokenRef *scm.SecretRef `json:"tokenRef,omitempty"`
	// Labels keep the merge requests carrying all of them.
	Labels []string `json:"labels,omitempty"`
	// PullRequestState keeps the merge requests in this state (opened,
	// closed, merged, locked); empty: every state, as in Argo CD.
	PullRequestState string `json:"pullRequestState,omitempty"`
	// Insecure skips the verification of the server's certificate.
	Insecure bool `json:"insecure,omitempty"`
	// CARef names a ConfigMap key of PEM certificates to trust.
	CARef *scm.ConfigMapKeyRef `json:"caRef,omitempty"`
}

// Provider serves GitLab (gitlab.com and self-managed) with GitLab's
// client-go, for both generators.
type Provider struct{ opts scm.Options }

var (
	_ appset.SCMProvider         = (*Provider)(nil)
	_ appset.PullRequestProvider = (*Provider)(nil)
)

// New returns a GitLab provider.
func New(opts scm.Options) *Provider { return &Provider{opts: opts.WithDefaults()} }

func (p *Provider) client(ctx context.Context, namespace, api string, tokenRef *scm.SecretRef, caRef *scm.ConfigMapKeyRef, insecure bool) (*gl.Client, error) {
	hc, err := p.opts.HTTPClient(ctx, namespace, caRef, insecure)
	if err != nil {
		return nil, err
	}
	token, err := p.opts.SecretValue(ctx, namespace, tokenRef)
	if err != nil {
		return nil, err
	}
	// Rate limits are scm.RateLimits' business: the client's own retries
	// are off.
	opts := []gl.ClientOptionFunc{gl.WithHTTPClient(hc), gl.WithoutRetries()}
	if api != "" {
		opts = append(opts, gl.WithBaseURL(api))
	}
	c, err := gl.NewClient(token, opts...)
	if err != nil {
		return nil, fmt.Errorf("gitlab %s: %w", api, err)
	}
	return c, nil
}

// Open implements appset.SCMProvider.
func (p *Provider) Open(ctx context.Context, req appset.SCMRequest) (appset.SCMService, error) {
	var cfg SCMConfig
	if err := scm.Decode(Key, req.Config, &cfg); err != nil {
		return nil, err
	}
	if err := scm.Required(Key, map[string]string{"group": cfg.Group}); err != nil {
		return nil, err
	}
	if _, err := scm.CloneURL(req.CloneProtocol, "ssh", "", ""); err != nil {
		return nil, err
	}
	c, err := p.client(ctx, req.Namespace, cfg.API, cfg.TokenRef, cfg.CARef, cfg.Insecure)
	if err != nil {
		return nil, err
	}
	return &service{c: c, cfg: cfg, protocol: req.CloneProtocol}, nil
}

type service struct {
	c        *gl.Client
	cfg      SCMConfig
	protocol string
}

// Repositories lists the group's projects page by page (X-Next-Page),
// with their topics as labels.
func (s *service) Repositories(ctx context.Context) ([]appset.SCMRepository, error) {
	shared := s.cfg.IncludeSharedProjects == nil || *s.cfg.IncludeSharedProjects
	opt := &gl.ListGroupProjectsOptions{ListOptions: gl.ListOptions{PerPage: perPage}, IncludeSubGroups: &s.cfg.IncludeSubgroups, WithShared: &shared}
	if s.cfg.Topic != "" {
		opt.Topic = &s.cfg.Topic
	}
	if !s.cfg.IncludeArchivedRepos {
		opt.Archived = gl.Ptr(false)
	}
	var out []appset.SCMRepository
	for {
		projects, resp, err := s.c.Groups.ListGroupProjects(s.cfg.Group, opt, gl.WithContext(ctx))
		if err != nil {
			return nil, fmt.Errorf("list projects of %s: %w", s.cfg.Group, wrap(resp, err))
		}
		for _, pr := range projects {
			u, err := scm.CloneURL(s.protocol, "ssh", pr.SSHURLToRepo, pr.HTTPURLToRepo)
			if err != nil {
				return nil, err
			}
			org := s.cfg.Group
			if pr.Namespace != nil {
				org = pr.Namespace.FullPath
			}
			out = append(out, appset.SCMRepository{Organization: org, Repository: pr.Path, URL: u, Branch: pr.DefaultBranch,
				Labels: pr.Topics, RepositoryID: strconv.FormatInt(pr.ID, 10)})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
}

// Branches returns the default branch, or every branch under allBranches.
func (s *service) Branches(ctx context.Context, repo appset.SCMRepository) ([]appset.SCMRepository, error) {
	at := func(b *gl.Branch) appset.SCMRepository {
		r := repo
		r.Branch = b.Name
		if b.Commit != nil {
			r.SHA = b.Commit.ID
		}
		return r
	}
	if !s.cfg.AllBranches {
		b, resp, err := s.c.Branches.GetBranch(repo.RepositoryID, repo.Branch, gl.WithContext(ctx))
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			return nil, nil // an empty project
		}
		if err != nil {
			return nil, fmt.Errorf("branch %s of %s/%s: %w", repo.Branch, repo.Organization, repo.Repository, wrap(resp, err))
		}
		return []appset.SCMRepository{at(b)}, nil
	}
	opt := &gl.ListBranchesOptions{ListOptions: gl.ListOptions{PerPage: perPage}}
	var out []appset.SCMRepository
	for {
		bs, resp, err := s.c.Branches.ListBranches(repo.RepositoryID, opt, gl.WithContext(ctx))
		if err != nil {
			return nil, fmt.Errorf("branches of %s/%s: %w", repo.Organization, repo.Repository, wrap(resp, err))
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

// HasPath asks for the file, then for the directory's tree, at the
// branch; 404 to both is false.
func (s *service) HasPath(ctx context.Context, repo appset.SCMRepository, path string) (bool, error) {
	_, resp, err := s.c.RepositoryFiles.GetFile(repo.RepositoryID, path, &gl.GetFileOptions{Ref: &repo.Branch}, gl.WithContext(ctx))
	if err == nil {
		return true, nil
	}
	if resp == nil || resp.StatusCode != http.StatusNotFound {
		return false, wrap(resp, err)
	}
	tree, resp, err := s.c.Repositories.ListTree(repo.RepositoryID, &gl.ListTreeOptions{Path: &path, Ref: &repo.Branch}, gl.WithContext(ctx))
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return false, nil
	}
	if err != nil {
		return false, wrap(resp, err)
	}
	return len(tree) > 0, nil
}

// PullRequests implements appset.PullRequestProvider: the project's merge
// requests in pullRequestState (all when empty) carrying every label.
func (p *Provider) PullRequests(ctx context.Context, req appset.PullRequestRequest) ([]appset.PullRequest, error) {
	var cfg PullRequestConfig
	if err := scm.Decode(Key, req.Config, &cfg); err != nil {
		return nil, err
	}
	if err := scm.Required(Key, map[string]string{"project": cfg.Project}); err != nil {
		return nil, err
	}
	c, err := p.client(ctx, req.Namespace, cfg.API, cfg.TokenRef, cfg.CARef, cfg.Insecure)
	if err != nil {
		return nil, err
	}
	opt := &gl.ListProjectMergeRequestsOptions{ListOptions: gl.ListOptions{PerPage: perPage}}
	if len(cfg.Labels) > 0 {
		l := gl.LabelOptions(cfg.Labels)
		opt.Labels = &l
	}
	if cfg.PullRequestState != "" {
		opt.State = &cfg.PullRequestState
	}
	var out []appset.PullRequest
	for {
		mrs, resp, err := c.MergeRequests.ListProjectMergeRequests(cfg.Project, opt, gl.WithContext(ctx))
		if err != nil {
			return nil, fmt.Errorf("list merge requests of %s: %w", cfg.Project, wrap(resp, err))
		}
		for _, mr := range mrs {
			x := appset.PullRequest{Number: int(mr.IID), Title: mr.Title, Branch: mr.SourceBranch, TargetBranch: mr.TargetBranch,
				HeadSHA: mr.SHA, Labels: []string(mr.Labels)}
			if mr.Author != nil {
				x.Author = mr.Author.Username
			}
			out = append(out, x)
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
}

// wrap marks a 404 as appset.ErrRepositoryNotFound.
func wrap(resp *gl.Response, err error) error {
	if resp != nil && resp.StatusCode == http.StatusNotFound || errors.Is(err, gl.ErrNotFound) {
		return fmt.Errorf("%w: %w", appset.ErrRepositoryNotFound, err)
	}
	return err
}
