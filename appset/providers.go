package appset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// SCMRepository is one repository (at one branch) an SCM provider reports.
type SCMRepository struct {
	// Organization is the repository's owner (organization, group, project).
	Organization string
	// Repository is the repository's name.
	Repository string
	// URL is the clone URL the generator's cloneProtocol chose.
	URL string
	// Branch is the branch reported.
	Branch string
	// SHA is the branch's head commit.
	SHA string
	// Labels are the repository's labels or topics.
	Labels []string
	// RepositoryID is the forge's id of the repository.
	RepositoryID string
}

// SCMRequest is what one scmProvider generator asks of its provider.
type SCMRequest struct {
	// Namespace is the set's namespace, where tokenRef Secrets are read
	// (as Argo CD reads them).
	Namespace string
	// Config is the generator's provider block (its "github:", "gitlab:"
	// ... object) unchanged; the provider decodes it strictly.
	Config json.RawMessage
	// CloneProtocol is the generator's cloneProtocol ("" for the forge's
	// default).
	CloneProtocol string
}

// SCMProvider opens an organisation of a forge for scmProvider generators.
// Package appset/scm/all registers Argo CD's providers; a host may plug in
// its own.
type SCMProvider interface {
	Open(ctx context.Context, req SCMRequest) (SCMService, error)
}

// SCMService lists what the scmProvider generator reads from one
// organisation, as Argo CD's providers do: the repositories, then each
// repository's branches, then the paths the filters ask about.
type SCMService interface {
	// Repositories lists the organisation's repositories (Branch: the
	// default branch, when the forge says it).
	Repositories(ctx context.Context) ([]SCMRepository, error)
	// Branches returns repo once per branch generated for: its default
	// branch, or every branch when the config sets allBranches, each with
	// its head SHA.
	Branches(ctx context.Context, repo SCMRepository) ([]SCMRepository, error)
	// HasPath reports whether repo's branch has path (a file or a
	// directory), for the pathsExist and pathsDoNotExist filters.
	HasPath(ctx context.Context, repo SCMRepository, path string) (bool, error)
}

// PullRequest is one open pull request a provider reports.
type PullRequest struct {
	// Number is the pull request's number.
	Number int
	// Title is the pull request's title.
	Title string
	// Branch is the pull request's source branch.
	Branch string
	// TargetBranch is the branch it merges into.
	TargetBranch string
	// HeadSHA is the source branch's head commit.
	HeadSHA string
	// Author is the pull request's author.
	Author string
	// Labels are the pull request's labels.
	Labels []string
}

// PullRequestRequest is what one pullRequest generator asks of its
// provider.
type PullRequestRequest struct {
	// Namespace is the set's namespace, where tokenRef Secrets are read.
	Namespace string
	// Config is the generator's provider block unchanged.
	Config json.RawMessage
}

// PullRequestProvider lists the open pull requests of a repository for
// pullRequest generators. An error wrapping ErrRepositoryNotFound lets
// continueOnRepoNotFoundError yield nothing instead of failing.
type PullRequestProvider interface {
	PullRequests(ctx context.Context, req PullRequestRequest) ([]PullRequest, error)
}

// ErrRepositoryNotFound is wrapped by a provider's error when the forge
// answers that the repository (or organisation) does not exist.
var ErrRepositoryNotFound = errors.New("repository not found")

// StaticSCM is an SCMProvider serving a fixed list (for tests and
// offline runs): every repository at its Branch; HasPath answers from
// Paths ("org/repo/branch" -> paths).
type StaticSCM struct {
	// Repos are the repositories served.
	Repos []SCMRepository
	// Paths are the paths each "org/repo/branch" has.
	Paths map[string][]string
}

// Open returns s itself.
func (s StaticSCM) Open(context.Context, SCMRequest) (SCMService, error) { return s, nil }

// Repositories returns s.Repos.
func (s StaticSCM) Repositories(context.Context) ([]SCMRepository, error) { return s.Repos, nil }

// Branches returns repo as it is.
func (s StaticSCM) Branches(_ context.Context, repo SCMRepository) ([]SCMRepository, error) {
	return []SCMRepository{repo}, nil
}

// HasPath looks path up in s.Paths.
func (s StaticSCM) HasPath(_ context.Context, r SCMRepository, path string) (bool, error) {
	return slices.Contains(s.Paths[r.Organization+"/"+r.Repository+"/"+r.Branch], path), nil
}

// StaticPullRequests is a PullRequestProvider serving a fixed list.
type StaticPullRequests []PullRequest

// PullRequests returns the list.
func (s StaticPullRequests) PullRequests(context.Context, PullRequestRequest) ([]PullRequest, error) {
	return s, nil
}

// providerKey returns the one provider block set, by its key; a block
// written as null ("gitlab:" with nothing after it) is not set.
func providerKey(blocks map[string]json.RawMessage) (string, json.RawMessage, error) {
	var key string
	var cfg json.RawMessage
	for k, v := range blocks {
		if len(v) == 0 || string(v) == "null" {
			continue
		}
		if key != "" {
			a, b := key, k
			if b < a {
				a, b = b, a
			}
			return "", nil, fmt.Errorf("two providers set: %s and %s", a, b)
		}
		key, cfg = k, v
	}
	if key == "" {
		return "", nil, fmt.Errorf("no provider set")
	}
	return key, cfg, nil
}

// SCMPolicy is what the host allows scmProvider and pullRequest
// generators to reach (Argo CD's applicationsetcontroller.enable.scm.providers
// and applicationsetcontroller.allowed.scm.providers).
type SCMPolicy struct {
	// Disabled refuses every scmProvider and pullRequest generator
	// (ErrSCMDisabled).
	Disabled bool
	// AllowedAPIs, when not empty, are the only custom API URLs (a
	// provider block's "api") a generator may name (ErrSCMNotAllowed); a
	// block without api (the forge's public service) is always allowed,
	// as in Argo CD.
	AllowedAPIs []string
}

// The refusals of SCMPolicy.
var (
	ErrSCMDisabled   = errors.New("scm providers are disabled")
	ErrSCMNotAllowed = errors.New("scm provider not allowed")
)

// check applies the policy to a provider block.
func (p SCMPolicy) check(cfg json.RawMessage) error {
	if p.Disabled {
		return ErrSCMDisabled
	}
	if len(p.AllowedAPIs) == 0 {
		return nil
	}
	var block struct {
		API string `json:"api"`
	}
	_ = json.Unmarshal(cfg, &block) // a malformed block fails in the provider, naming the field
	if block.API == "" || slices.Contains(p.AllowedAPIs, block.API) {
		return nil
	}
	return fmt.Errorf("%w: %q is not one of %s", ErrSCMNotAllowed, block.API, strings.Join(p.AllowedAPIs, ", "))
}
