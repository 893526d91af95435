package bitbucketserver

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/appset/scm"
)

// Key is the provider block's key in scmProvider and pullRequest
// generators.
const Key = "bitbucketServer"

// limit is the page size asked of Bitbucket Server.
const limit = 100

// BasicAuth is a user and the Secret key of its password (Argo CD's
// BasicAuthBitbucketServer).
type BasicAuth struct {
	// Username is the user.
	Username string `json:"username"`
	// PasswordRef is the Secret key of the user's password.
	PasswordRef *scm.SecretRef `json:"passwordRef"`
}

// BearerToken is the Secret key of an HTTP access token.
type BearerToken struct {
	// TokenRef is the Secret key of the token.
	TokenRef *scm.SecretRef `json:"tokenRef"`
}

// SCMConfig is the scmProvider generator's bitbucketServer block (Argo
// CD's SCMProviderGeneratorBitbucketServer).
type SCMConfig struct {
	// Project is the project key whose repositories are listed. Required.
	Project string `json:"project"`
	// API is the server's URL ("https://bitbucket.example.com").
	// Required.
	API string `json:"api"`
	// BasicAuth or BearerToken authenticate; neither: anonymous.
	BasicAuth   *BasicAuth   `json:"basicAuth,omitempty"`
	BearerToken *BearerToken `json:"bearerToken,omitempty"`
	// AllBranches yields every branch, not only the default one.
	AllBranches bool `json:"allBranches,omitempty"`
	// Insecure skips the verification of the server's certificate.
	Insecure bool `json:"insecure,omitempty"`
	// CARef names a ConfigMap key of PEM certificates to trust.
	CARef *scm.ConfigMapKeyRef `json:"caRef,omitempty"`
}

// PullRequestConfig is the pullRequest generator's bitbucketServer block
// (Argo CD's PullRequestGeneratorBitbucketServer).
type PullRequestConfig struct {
	// Project and Repo name the repository. Required.
	Project string `json:"project"`
	Repo    string `json:"repo"`
	// API is the server's URL. Required.
	API string `json:"api"`
	// BasicAuth authenticates with a user and password.
	BasicAuth *BasicAuth `json:"basicAuth,omitempty"`
	// BearerToken authenticates with an access token.
	BearerToken *BearerToken `json:"bearerToken,omitempty"`
	// Insecure skips the server's TLS certificate check.
	Insecure bool `json:"insecure,omitempty"`
	// CARef is the ConfigMap key of the certificate authorities trusted for
	// the server.
	CARef *scm.ConfigMapKeyRef `json:"caRef,omitempty"`
}

// Provider serves Bitbucket Server (Data Center) through its REST API
// 1.0, for both generators.
type Provider struct{ opts scm.Options }

var (
	_ appset.SCMProvider         = (*Provider)(nil)
	_ appset.PullRequestProvider = (*Provider)(nil)
)

// New returns a Bitbucket Server provider.
func New(opts scm.Options) *Provider { return &Provider{opts: opts.WithDefaults()} }

// conn is one authenticated server.
type conn struct {
	hc   *http.Client
	base string
	auth func(*http.Request)
}

func (p *Provider) conn(ctx context.Context, namespace, api string, basic *BasicAuth, bearer *BearerToken, caRef *scm.ConfigMapKeyRef, insecure bool) (*conn, error) {
	hc, err := p.opts.HTTPClient(ctx, namespace, caRef, insecure)
	if err != nil {
		return nil, err
	}
	c := &conn{hc: hc, base: strings.TrimRight(api, "/") + "/rest/api/1.0"}
	switch {
	case bearer != nil:
		tok, err := p.opts.SecretValue(ctx, namespace, bearer.TokenRef)
		if err != nil {
			return nil, err
		}
		c.auth = func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }
	case basic != nil:
		pw, err := p.opts.SecretValue(ctx, namespace, basic.PasswordRef)
		if err != nil {
			return nil, err
		}
		c.auth = func(r *http.Request) { r.SetBasicAuth(basic.Username, pw) }
	}
	return c, nil
}

// page is Bitbucket Server's paged answer.
type page[T any] struct {
	Values        []T  `json:"values"`
	IsLastPage    bool `json:"isLastPage"`
	NextPageStart int  `json:"nextPageStart"`
}

// all reads every page of path (start and limit added to query).
func all[T any](ctx context.Context, c *conn, path string, query url.Values) ([]T, error) {
	var out []T
	start := 0
	for {
		q := url.Values{}
		for k, v := range query {
			q[k] = v
		}
		q.Set("limit", strconv.Itoa(limit))
		q.Set("start", strconv.Itoa(start))
		var pg page[T]
		if _, err := scm.GetJSON(ctx, c.hc, c.base+path+"?"+q.Encode(), c.auth, &pg); err != nil {
			return nil, err
		}
		out = append(out, pg.Values...)
		if pg.IsLastPage || len(pg.Values) == 0 {
			return out, nil
		}
		start = pg.NextPageStart
	}
}

type repository struct {
	ID      int    `json:"id"`
	Slug    string `json:"slug"`
	Name    string `json:"name"`
	Project struct {
		Key string `json:"key"`
	} `json:"project"`
	Links struct {
		Clone []struct {
			Href string `json:"href"`
			Name string `json:"name"`
		} `json:"clone"`
	} `json:"links"`
}

type branch struct {
	ID           string `json:"id"`
	DisplayID    string `json:"displayId"`
	LatestCommit string `json:"latestCommit"`
}

// Open implements appset.SCMProvider.
func (p *Provider) Open(ctx context.Context, req appset.SCMRequest) (appset.SCMService, error) {
	var cfg SCMConfig
	if err := scm.Decode(Key, req.Config, &cfg); err != nil {
		return nil, err
	}
	if err := scm.Required(Key, map[string]string{"project": cfg.Project, "api": cfg.API}); err != nil {
		return nil, err
	}
	if _, err := scm.CloneURL(req.CloneProtocol, "ssh", "", ""); err != nil {
		return nil, err
	}
	c, err := p.conn(ctx, req.Namespace, cfg.API, cfg.BasicAuth, cfg.BearerToken, cfg.CARef, cfg.Insecure)
	if err != nil {
		return nil, err
	}
	return &service{c: c, cfg: cfg, protocol: req.CloneProtocol, slugs: map[string]string{}}, nil
}

type service struct {
	c        *conn
	cfg      SCMConfig
	protocol string
	slugs    map[string]string // name -> slug
}

func (s *service) repoPath(repo appset.SCMRepository) string {
	slug := s.slugs[repo.Repository]
	if slug == "" {
		slug = repo.Repository
	}
	return "/projects/" + url.PathEscape(repo.Organization) + "/repos/" + url.PathEscape(slug)
}

// Repositories lists the project's repositories page by page
// (isLastPage, nextPageStart), each at its default branch; a repository
// without one (empty) is left out, as in Argo CD. Bitbucket Server has no
// repository labels.
func (s *service) Repositories(ctx context.Context) ([]appset.SCMRepository, error) {
	repos, err := all[repository](ctx, s.c, "/projects/"+url.PathEscape(s.cfg.Project)+"/repos", nil)
	if err != nil {
		return nil, fmt.Errorf("list repositories of %s: %w", s.cfg.Project, err)
	}
	var out []appset.SCMRepository
	for _, r := range repos {
		var sshURL, httpURL string
		for _, l := range r.Links.Clone {
			switch l.Name {
			case "ssh":
				sshURL = l.Href
			case "http":
				httpURL = l.Href
			}
		}
		u, err := scm.CloneURL(s.protocol, "ssh", sshURL, httpURL)
		if err != nil {
			return nil, err
		}
		s.slugs[r.Name] = r.Slug
		x := appset.SCMRepository{Organization: r.Project.Key, Repository: r.Name, URL: u, RepositoryID: strconv.Itoa(r.ID)}
		b, err := s.defaultBranch(ctx, x)
		if err != nil {
			return nil, err
		}
		if b == nil {
			continue
		}
		x.Branch, x.SHA = b.DisplayID, b.LatestCommit
		out = append(out, x)
	}
	return out, nil
}

func (s *service) defaultBranch(ctx context.Context, repo appset.SCMRepository) (*branch, error) {
	var b branch
	_, err := scm.GetJSON(ctx, s.c.hc, s.c.base+s.repoPath(repo)+"/branches/default", s.c.auth, &b)
	if scm.NotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("default branch of %s/%s: %w", repo.Organization, repo.Repository, err)
	}
	return &b, nil
}

// Branches returns the default branch, or every branch under allBranches.
func (s *service) Branches(ctx context.Context, repo appset.SCMRepository) ([]appset.SCMRepository, error) {
	if !s.cfg.AllBranches {
		if repo.SHA != "" {
			return []appset.SCMRepository{repo}, nil
		}
		b, err := s.defaultBranch(ctx, repo)
		if err != nil || b == nil {
			return nil, err
		}
		repo.Branch, repo.SHA = b.DisplayID, b.LatestCommit
		return []appset.SCMRepository{repo}, nil
	}
	bs, err := all[branch](ctx, s.c, s.repoPath(repo)+"/branches", nil)
	if err != nil {
		return nil, fmt.Errorf("branches of %s/%s: %w", repo.Organization, repo.Repository, err)
	}
	out := make([]appset.SCMRepository, 0, len(bs))
	for _, b := range bs {
		r := repo
		r.Branch, r.SHA = b.DisplayID, b.LatestCommit
		out = append(out, r)
	}
	return out, nil
}

// HasPath browses the path at the branch; 404 is false.
func (s *service) HasPath(ctx context.Context, repo appset.SCMRepository, path string) (bool, error) {
	q := url.Values{"at": {repo.Branch}, "type": {"true"}}
	_, err := scm.GetJSON(ctx, s.c.hc, s.c.base+s.repoPath(repo)+"/browse/"+escapePath(path)+"?"+q.Encode(), s.c.auth, nil)
	if scm.NotFound(err) {
		return false, nil
	}
	return err == nil, err
}

func escapePath(p string) string {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

type pullRequest struct {
	ID      int    `json:"id"`
	Title   string `json:"title"`
	FromRef branch `json:"fromRef"`
	ToRef   branch `json:"toRef"`
	Author  struct {
		User struct {
			Name string `json:"name"`
		} `json:"user"`
	} `json:"author"`
}

// PullRequests implements appset.PullRequestProvider: the repository's
// open pull requests, page by page. Bitbucket Server has no pull request
// labels.
func (p *Provider) PullRequests(ctx context.Context, req appset.PullRequestRequest) ([]appset.PullRequest, error) {
	var cfg PullRequestConfig
	if err := scm.Decode(Key, req.Config, &cfg); err != nil {
		return nil, err
	}
	if err := scm.Required(Key, map[string]string{"project": cfg.Project, "repo": cfg.Repo, "api": cfg.API}); err != nil {
		return nil, err
	}
	c, err := p.conn(ctx, req.Namespace, cfg.API, cfg.BasicAuth, cfg.BearerToken, cfg.CARef, cfg.Insecure)
	if err != nil {
		return nil, err
	}
	prs, err := all[pullRequest](ctx, c, "/projects/"+url.PathEscape(cfg.Project)+"/repos/"+url.PathEscape(cfg.Repo)+"/pull-requests", url.Values{"state": {"OPEN"}})
	if err != nil {
		return nil, fmt.Errorf("list pull requests of %s/%s: %w", cfg.Project, cfg.Repo, err)
	}
	out := make([]appset.PullRequest, 0, len(prs))
	for _, pr := range prs {
		out = append(out, appset.PullRequest{Number: pr.ID, Title: pr.Title, Branch: pr.FromRef.DisplayID, TargetBranch: pr.ToRef.DisplayID,
			HeadSHA: pr.FromRef.LatestCommit, Author: pr.Author.User.Name})
	}
	return out, nil
}
