package azuredevops

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/appset/scm"
)

// Key is the provider block's key in scmProvider generators; pullRequest
// generators spell it "azuredevops" (v1alpha1 reads both into the same
// field).
const Key = "azureDevOps"

// DefaultAPI is Azure DevOps Services.
const DefaultAPI = "https://dev.azure.com"

// apiVersion is the REST API version asked.
const apiVersion = "7.1"

// top is the page size of pull request lists.
const top = 100

// SCMConfig is the scmProvider generator's azureDevOps block (Argo CD's
// SCMProviderGeneratorAzureDevOps).
type SCMConfig struct {
	// Organization and TeamProject name the project whose repositories
	// are listed. Required.
	Organization string `json:"organization"`
	TeamProject  string `json:"teamProject"`
	// API is Azure DevOps Server's URL; empty: DefaultAPI.
	API string `json:"api,omitempty"`
	// AccessTokenRef names the Secret key of a personal access token.
	// Required.
	AccessTokenRef *scm.SecretRef `json:"accessTokenRef"`
	// AllBranches yields every branch, not only the default one.
	AllBranches bool `json:"allBranches,omitempty"`
}

// PullRequestConfig is the pullRequest generator's azuredevops block
// (Argo CD's PullRequestGeneratorAzureDevOps).
type PullRequestConfig struct {
	// Organization, Project and Repo name the repository. Required.
	Organization string `json:"organization"`
	Project      string `json:"project"`
	Repo         string `json:"repo"`
	// API is Azure DevOps Server's URL; empty: DefaultAPI.
	API string `json:"api,omitempty"`
	// TokenRef names the Secret key of a personal access token.
	TokenRef *scm.SecretRef `json:"tokenRef,omitempty"`
	// Labels keep the pull requests carrying all of them.
	Labels []string `json:"labels,omitempty"`
}

// Provider serves Azure DevOps (Services and Server) through its Git
// REST API, for both generators.
type Provider struct{ opts scm.Options }

var (
	_ appset.SCMProvider         = (*Provider)(nil)
	_ appset.PullRequestProvider = (*Provider)(nil)
)

// New returns an Azure DevOps provider.
func New(opts scm.Options) *Provider { return &Provider{opts: opts.WithDefaults()} }

type conn struct {
	hc   *http.Client
	base string // {api}/{organization}/{project}/_apis/git
	auth func(*http.Request)
}

func (p *Provider) conn(ctx context.Context, namespace, api, org, project string, tokenRef *scm.SecretRef) (*conn, error) {
	hc, err := p.opts.HTTPClient(ctx, namespace, nil, false)
	if err != nil {
		return nil, err
	}
	tok, err := p.opts.SecretValue(ctx, namespace, tokenRef)
	if err != nil {
		return nil, err
	}
	if api == "" {
		api = DefaultAPI
	}
	c := &conn{hc: hc, base: strings.TrimRight(api, "/") + "/" + url.PathEscape(org) + "/" + url.PathEscape(project) + "/_apis/git"}
	if tok != "" {
		basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(":"+tok))
		c.auth = func(r *http.Request) { r.Header.Set("Authorization", basic) }
	}
	return c, nil
}

func (c *conn) url(path string, q url.Values) string {
	if q == nil {
		q = url.Values{}
	}
	q.Set("api-version", apiVersion)
	return c.base + path + "?" + q.Encode()
}

// list is Azure DevOps' list answer.
type list[T any] struct {
	Value []T `json:"value"`
}

type repository struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	DefaultBranch string `json:"defaultBranch"`
	RemoteURL     string `json:"remoteUrl"`
	SSHURL        string `json:"sshUrl"`
	IsDisabled    bool   `json:"isDisabled"`
}

type branchStats struct {
	Name   string `json:"name"`
	Commit struct {
		CommitID string `json:"commitId"`
	} `json:"commit"`
}

// Open implements appset.SCMProvider.
func (p *Provider) Open(ctx context.Context, req appset.SCMRequest) (appset.SCMService, error) {
	var cfg SCMConfig
	if err := scm.Decode(Key, req.Config, &cfg); err != nil {
		return nil, err
	}
	if err := scm.Required(Key, map[string]string{"organization": cfg.Organization, "teamProject": cfg.TeamProject}); err != nil {
		return nil, err
	}
	if cfg.AccessTokenRef == nil {
		return nil, &scm.ConfigError{Provider: Key, Field: "accessTokenRef", Err: fmt.Errorf("is required")}
	}
	if _, err := scm.CloneURL(req.CloneProtocol, "https", "", ""); err != nil {
		return nil, err
	}
	c, err := p.conn(ctx, req.Namespace, cfg.API, cfg.Organization, cfg.TeamProject, cfg.AccessTokenRef)
	if err != nil {
		return nil, err
	}
	return &service{c: c, cfg: cfg, protocol: req.CloneProtocol}, nil
}

type service struct {
	c        *conn
	cfg      SCMConfig
	protocol string
}

// Repositories lists the project's repositories (one answer: Azure
// DevOps does not page them); one without a default branch (empty) is
// left out, as in Argo CD. url is the remote (https) URL, or the SSH one
// under cloneProtocol ssh. Azure DevOps has no repository labels.
func (s *service) Repositories(ctx context.Context) ([]appset.SCMRepository, error) {
	var l list[repository]
	if _, err := scm.GetJSON(ctx, s.c.hc, s.c.url("/repositories", nil), s.c.auth, &l); err != nil {
		return nil, fmt.Errorf("list repositories of %s/%s: %w", s.cfg.Organization, s.cfg.TeamProject, err)
	}
	var out []appset.SCMRepository
	for _, r := range l.Value {
		if r.DefaultBranch == "" || r.IsDisabled {
			continue
		}
		u, err := scm.CloneURL(s.protocol, "https", r.SSHURL, r.RemoteURL)
		if err != nil {
			return nil, err
		}
		out = append(out, appset.SCMRepository{Organization: s.cfg.Organization, Repository: r.Name, URL: u,
			Branch: strings.TrimPrefix(r.DefaultBranch, "refs/heads/"), RepositoryID: r.ID})
	}
	return out, nil
}

// Branches returns the default branch, or every branch under allBranches
// (the branch statistics API).
func (s *service) Branches(ctx context.Context, repo appset.SCMRepository) ([]appset.SCMRepository, error) {
	path := "/repositories/" + url.PathEscape(repo.Repository) + "/stats/branches"
	at := func(b branchStats) appset.SCMRepository {
		r := repo
		r.Branch, r.SHA = b.Name, b.Commit.CommitID
		return r
	}
	if !s.cfg.AllBranches {
		var b branchStats
		_, err := scm.GetJSON(ctx, s.c.hc, s.c.url(path, url.Values{"name": {repo.Branch}}), s.c.auth, &b)
		if scm.NotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("branch %s of %s: %w", repo.Branch, repo.Repository, err)
		}
		return []appset.SCMRepository{at(b)}, nil
	}
	var l list[branchStats]
	if _, err := scm.GetJSON(ctx, s.c.hc, s.c.url(path, nil), s.c.auth, &l); err != nil {
		return nil, fmt.Errorf("branches of %s: %w", repo.Repository, err)
	}
	out := make([]appset.SCMRepository, 0, len(l.Value))
	for _, b := range l.Value {
		out = append(out, at(b))
	}
	return out, nil
}

// HasPath asks for the item at the branch; 404 is false.
func (s *service) HasPath(ctx context.Context, repo appset.SCMRepository, path string) (bool, error) {
	q := url.Values{"path": {path}, "versionDescriptor.version": {repo.Branch}, "versionDescriptor.versionType": {"branch"}}
	_, err := scm.GetJSON(ctx, s.c.hc, s.c.url("/repositories/"+url.PathEscape(repo.RepositoryID)+"/items", q), s.c.auth, nil)
	if scm.NotFound(err) {
		return false, nil
	}
	return err == nil, err
}

type pullRequest struct {
	PullRequestID         int    `json:"pullRequestId"`
	Title                 string `json:"title"`
	SourceRefName         string `json:"sourceRefName"`
	TargetRefName         string `json:"targetRefName"`
	LastMergeSourceCommit struct {
		CommitID string `json:"commitId"`
	} `json:"lastMergeSourceCommit"`
	CreatedBy struct {
		UniqueName string `json:"uniqueName"`
	} `json:"createdBy"`
	Labels []struct {
		Name string `json:"name"`
	} `json:"labels"`
}

// PullRequests implements appset.PullRequestProvider: the repository's
// active pull requests ($top/$skip pages) carrying every label; author is
// the creator's unique name before its "@", as in Argo CD.
func (p *Provider) PullRequests(ctx context.Context, req appset.PullRequestRequest) ([]appset.PullRequest, error) {
	var cfg PullRequestConfig
	if err := scm.Decode("azuredevops", req.Config, &cfg); err != nil {
		return nil, err
	}
	if err := scm.Required("azuredevops", map[string]string{"organization": cfg.Organization, "project": cfg.Project, "repo": cfg.Repo}); err != nil {
		return nil, err
	}
	c, err := p.conn(ctx, req.Namespace, cfg.API, cfg.Organization, cfg.Project, cfg.TokenRef)
	if err != nil {
		return nil, err
	}
	var out []appset.PullRequest
	for skip := 0; ; skip += top {
		q := url.Values{"searchCriteria.status": {"active"}, "$top": {strconv.Itoa(top)}, "$skip": {strconv.Itoa(skip)}}
		var l list[pullRequest]
		if _, err := scm.GetJSON(ctx, c.hc, c.url("/repositories/"+url.PathEscape(cfg.Repo)+"/pullrequests", q), c.auth, &l); err != nil {
			return nil, fmt.Errorf("list pull requests of %s/%s/%s: %w", cfg.Organization, cfg.Project, cfg.Repo, err)
		}
		for _, pr := range l.Value {
			var labels []string
			for _, lb := range pr.Labels {
				labels = append(labels, lb.Name)
			}
			if !scm.HasAll(labels, cfg.Labels) {
				continue
			}
			author, _, _ := strings.Cut(pr.CreatedBy.UniqueName, "@")
			out = append(out, appset.PullRequest{Number: pr.PullRequestID, Title: pr.Title,
				Branch: strings.TrimPrefix(pr.SourceRefName, "refs/heads/"), TargetBranch: strings.TrimPrefix(pr.TargetRefName, "refs/heads/"),
				HeadSHA: pr.LastMergeSourceCommit.CommitID, Author: author, Labels: labels})
		}
		if len(l.Value) < top {
			return out, nil
		}
	}
}
