package bitbucketcloud

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/appset/scm"
)

// Key is the provider block's key in scmProvider and pullRequest
// generators.
const Key = "bitbucket"

// DefaultAPI is Bitbucket Cloud's API.
const DefaultAPI = "https://api.bitbucket.org/2.0"

// pagelen is the page size asked of Bitbucket Cloud (its maximum for
// repositories is 100, for pull requests 50).
const pagelen = 50

// SCMConfig is the scmProvider generator's bitbucket block (Argo CD's
// SCMProviderGeneratorBitbucket).
type SCMConfig struct {
	// Owner is the workspace whose repositories are listed. Required.
	Owner string `json:"owner"`
	// User and AppPasswordRef authenticate (an app password). Required.
	User           string         `json:"user"`
	AppPasswordRef *scm.SecretRef `json:"appPasswordRef"`
	// AllBranches yields every branch, not only the main one.
	AllBranches bool `json:"allBranches,omitempty"`
}

// BasicAuth is a user and the Secret key of its password.
type BasicAuth struct {
	// Username is the user.
	Username string `json:"username"`
	// PasswordRef is the Secret key of the user's password.
	PasswordRef *scm.SecretRef `json:"passwordRef"`
}

// BearerToken is the Secret key of an access token.
type BearerToken struct {
	// TokenRef is the Secret key of the token.
	TokenRef *scm.SecretRef `json:"tokenRef"`
}

// PullRequestConfig is the pullRequest generator's bitbucket block (Argo
// CD's PullRequestGeneratorBitbucket).
type PullRequestConfig struct {
	// Owner (the workspace) and Repo name the repository. Required.
	Owner string `json:"owner"`
	Repo  string `json:"repo"`
	// API is the API's URL; empty: DefaultAPI.
	API string `json:"api,omitempty"`
	// BasicAuth or BearerToken authenticate; neither: anonymous.
	BasicAuth   *BasicAuth   `json:"basicAuth,omitempty"`
	BearerToken *BearerToken `json:"bearerToken,omitempty"`
}

// Provider serves Bitbucket Cloud through its REST API 2.0, for both
// generators.
type Provider struct {
	opts scm.Options
	// api is where scmProvider generators call (DefaultAPI; a test's
	// server).
	api string
}

var (
	_ appset.SCMProvider         = (*Provider)(nil)
	_ appset.PullRequestProvider = (*Provider)(nil)
)

// New returns a Bitbucket Cloud provider.
func New(opts scm.Options) *Provider { return &Provider{opts: opts.WithDefaults(), api: DefaultAPI} }

// WithSCMAPI returns p calling api for scmProvider generators, whose
// block (as Argo CD's) names no API: for a test's server or a proxy.
func (p *Provider) WithSCMAPI(api string) *Provider {
	c := *p
	c.api = strings.TrimRight(api, "/")
	return &c
}

type conn struct {
	hc   *http.Client
	auth func(*http.Request)
}

// paged is Bitbucket Cloud's page: the next page is a URL.
type paged[T any] struct {
	Values []T    `json:"values"`
	Next   string `json:"next"`
}

func all[T any](ctx context.Context, c conn, first string) ([]T, error) {
	var out []T
	for u := first; u != ""; {
		var pg paged[T]
		if _, err := scm.GetJSON(ctx, c.hc, u, c.auth, &pg); err != nil {
			return nil, err
		}
		out = append(out, pg.Values...)
		u = pg.Next
	}
	return out, nil
}

type repository struct {
	Name       string `json:"name"`
	Slug       string `json:"slug"`
	UUID       string `json:"uuid"`
	Mainbranch struct {
		Name string `json:"name"`
	} `json:"mainbranch"`
	Links struct {
		Clone []struct {
			Href string `json:"href"`
			Name string `json:"name"`
		} `json:"clone"`
	} `json:"links"`
}

type branch struct {
	Name   string `json:"name"`
	Target struct {
		Hash string `json:"hash"`
	} `json:"target"`
}

// Open implements appset.SCMProvider.
func (p *Provider) Open(ctx context.Context, req appset.SCMRequest) (appset.SCMService, error) {
	var cfg SCMConfig
	if err := scm.Decode(Key, req.Config, &cfg); err != nil {
		return nil, err
	}
	if err := scm.Required(Key, map[string]string{"owner": cfg.Owner, "user": cfg.User}); err != nil {
		return nil, err
	}
	if _, err := scm.CloneURL(req.CloneProtocol, "ssh", "", ""); err != nil {
		return nil, err
	}
	if cfg.AppPasswordRef == nil {
		return nil, &scm.ConfigError{Provider: Key, Field: "appPasswordRef", Err: fmt.Errorf("is required")}
	}
	hc, err := p.opts.HTTPClient(ctx, req.Namespace, nil, false)
	if err != nil {
		return nil, err
	}
	pw, err := p.opts.SecretValue(ctx, req.Namespace, cfg.AppPasswordRef)
	if err != nil {
		return nil, err
	}
	c := conn{hc: hc, auth: func(r *http.Request) { r.SetBasicAuth(cfg.User, pw) }}
	return &service{c: c, api: p.api, cfg: cfg, protocol: req.CloneProtocol}, nil
}

type service struct {
	c        conn
	api      string
	cfg      SCMConfig
	protocol string
}

func (s *service) repoURL(repo appset.SCMRepository) string {
	return s.api + "/repositories/" + url.PathEscape(repo.Organization) + "/" + url.PathEscape(repo.Repository)
}

// Repositories lists the workspace's repositories page by page (next).
// Bitbucket Cloud has no repository labels.
func (s *service) Repositories(ctx context.Context) ([]appset.SCMRepository, error) {
	repos, err := all[repository](ctx, s.c, fmt.Sprintf("%s/repositories/%s?pagelen=%d", s.api, url.PathEscape(s.cfg.Owner), pagelen))
	if err != nil {
		return nil, fmt.Errorf("list repositories of %s: %w", s.cfg.Owner, err)
	}
	out := make([]appset.SCMRepository, 0, len(repos))
	for _, r := range repos {
		var sshURL, httpsURL string
		for _, l := range r.Links.Clone {
			switch l.Name {
			case "ssh":
				sshURL = l.Href
			case "https":
				httpsURL = l.Href
			}
		}
		u, err := scm.CloneURL(s.protocol, "ssh", sshURL, httpsURL)
		if err != nil {
			return nil, err
		}
		slug := r.Slug
		if slug == "" {
			slug = r.Name
		}
		out = append(out, appset.SCMRepository{Organization: s.cfg.Owner, Repository: slug, URL: u, Branch: r.Mainbranch.Name, RepositoryID: r.UUID})
	}
	return out, nil
}

// Branches returns the main branch (none for an empty repository), or
// every branch under allBranches.
func (s *service) Branches(ctx context.Context, repo appset.SCMRepository) ([]appset.SCMRepository, error) {
	at := func(b branch) appset.SCMRepository {
		r := repo
		r.Branch, r.SHA = b.Name, b.Target.Hash
		return r
	}
	if !s.cfg.AllBranches {
		if repo.Branch == "" {
			return nil, nil
		}
		var b branch
		_, err := scm.GetJSON(ctx, s.c.hc, s.repoURL(repo)+"/refs/branches/"+url.PathEscape(repo.Branch), s.c.auth, &b)
		if scm.NotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("branch %s of %s/%s: %w", repo.Branch, repo.Organization, repo.Repository, err)
		}
		return []appset.SCMRepository{at(b)}, nil
	}
	bs, err := all[branch](ctx, s.c, fmt.Sprintf("%s/refs/branches?pagelen=%d", s.repoURL(repo), pagelen))
	if err != nil {
		return nil, fmt.Errorf("branches of %s/%s: %w", repo.Organization, repo.Repository, err)
	}
	out := make([]appset.SCMRepository, 0, len(bs))
	for _, b := range bs {
		out = append(out, at(b))
	}
	return out, nil
}

// HasPath asks for the path's metadata at the branch; 404 is false.
func (s *service) HasPath(ctx context.Context, repo appset.SCMRepository, path string) (bool, error) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	_, err := scm.GetJSON(ctx, s.c.hc, s.repoURL(repo)+"/src/"+url.PathEscape(repo.Branch)+"/"+strings.Join(parts, "/")+"?format=meta", s.c.auth, nil)
	if scm.NotFound(err) {
		return false, nil
	}
	return err == nil, err
}

type pullRequest struct {
	ID     int    `json:"id"`
	Title  string `json:"title"`
	Source struct {
		Branch struct {
			Name string `json:"name"`
		} `json:"branch"`
		Commit struct {
			Hash string `json:"hash"`
		} `json:"commit"`
	} `json:"source"`
	Destination struct {
		Branch struct {
			Name string `json:"name"`
		} `json:"branch"`
	} `json:"destination"`
	Author struct {
		Nickname string `json:"nickname"`
	} `json:"author"`
}

// PullRequests implements appset.PullRequestProvider: the repository's
// open pull requests, page by page. head_sha is the commit hash Bitbucket
// Cloud reports (12 characters). Bitbucket Cloud has no pull request
// labels.
func (p *Provider) PullRequests(ctx context.Context, req appset.PullRequestRequest) ([]appset.PullRequest, error) {
	var cfg PullRequestConfig
	if err := scm.Decode(Key, req.Config, &cfg); err != nil {
		return nil, err
	}
	if err := scm.Required(Key, map[string]string{"owner": cfg.Owner, "repo": cfg.Repo}); err != nil {
		return nil, err
	}
	hc, err := p.opts.HTTPClient(ctx, req.Namespace, nil, false)
	if err != nil {
		return nil, err
	}
	c := conn{hc: hc}
	switch {
	case cfg.BearerToken != nil:
		tok, err := p.opts.SecretValue(ctx, req.Namespace, cfg.BearerToken.TokenRef)
		if err != nil {
			return nil, err
		}
		c.auth = func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }
	case cfg.BasicAuth != nil:
		pw, err := p.opts.SecretValue(ctx, req.Namespace, cfg.BasicAuth.PasswordRef)
		if err != nil {
			return nil, err
		}
		c.auth = func(r *http.Request) { r.SetBasicAuth(cfg.BasicAuth.Username, pw) }
	}
	api := strings.TrimRight(cfg.API, "/")
	if api == "" {
		api = DefaultAPI
	}
	prs, err := all[pullRequest](ctx, c, fmt.Sprintf("%s/repositories/%s/%s/pullrequests?state=OPEN&pagelen=%d", api, url.PathEscape(cfg.Owner), url.PathEscape(cfg.Repo), pagelen))
	if err != nil {
		return nil, fmt.Errorf("list pull requests of %s/%s: %w", cfg.Owner, cfg.Repo, err)
	}
	out := make([]appset.PullRequest, 0, len(prs))
	for _, pr := range prs {
		out = append(out, appset.PullRequest{Number: pr.ID, Title: pr.Title, Branch: pr.Source.Branch.Name, TargetBranch: pr.Destination.Branch.Name,
			HeadSHA: pr.Source.Commit.Hash, Author: pr.Author.Nickname})
	}
	return out, nil
}
