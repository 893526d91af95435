package appset

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// scmProvider yields a set per repository branch that passes the filters:
// organization, repository, url, branch, branchNormalized, sha,
// short_sha, short_sha_7, labels, repository_id and values.
//
// The filters are Argo CD's: a filter with only repositoryMatch and
// labelMatch is a repository filter, one with any of pathsExist,
// pathsDoNotExist and branchMatch a branch filter. A repository passes
// when it matches any repository filter (or there is none); its branches
// are then listed, and a branch passes when it matches any branch filter
// (or there is none). Within one filter every field set must match.
func (c *genCtx) scmProvider(ctx context.Context, g *SCMProviderGenerator) ([]Params, error) {
	key, cfg, err := providerKey(map[string]json.RawMessage{"github": g.Github, "gitlab": g.Gitlab, "gitea": g.Gitea,
		"bitbucket": g.Bitbucket, "bitbucketServer": g.BitbucketServer, "azureDevOps": g.AzureDevOps, "awsCodeCommit": g.AWSCodeCommit})
	if err != nil {
		return nil, err
	}
	if err := c.r.opts.SCM.check(cfg); err != nil {
		return nil, fmt.Errorf("scmProvider %s: %w", key, err)
	}
	prov, ok := c.r.opts.SCMProviders[key]
	if !ok {
		return nil, fmt.Errorf("%w: scmProvider %q is not registered by the host", ErrNoProvider, key)
	}
	repoFilters, branchFilters, err := compileSCMFilters(g.Filters)
	if err != nil {
		return nil, err
	}
	svc, err := prov.Open(ctx, SCMRequest{Namespace: c.set.Namespace, Config: cfg, CloneProtocol: g.CloneProtocol})
	if err != nil {
		return nil, fmt.Errorf("scmProvider %s: %w", key, err)
	}
	repos, err := svc.Repositories(ctx)
	if err != nil {
		return nil, fmt.Errorf("scmProvider %s: %w", key, err)
	}
	var out []Params
	for _, r := range repos {
		ok, err := anyFilter(ctx, svc, repoFilters, r)
		if err != nil || !ok {
			if err != nil {
				return nil, fmt.Errorf("scmProvider %s: %w", key, err)
			}
			continue
		}
		branches, err := svc.Branches(ctx, r)
		if err != nil {
			return nil, fmt.Errorf("scmProvider %s: %s/%s: %w", key, r.Organization, r.Repository, err)
		}
		for _, b := range branches {
			ok, err := anyFilter(ctx, svc, branchFilters, b)
			if err != nil {
				return nil, fmt.Errorf("scmProvider %s: %s/%s: %w", key, b.Organization, b.Repository, err)
			}
			if !ok {
				continue
			}
			p := Params{"organization": b.Organization, "repository": b.Repository, "url": b.URL, "branch": b.Branch,
				"branchNormalized": SanitizeName(b.Branch), "sha": b.SHA, "short_sha": short(b.SHA, 8), "short_sha_7": short(b.SHA, 7),
				"labels": strings.Join(b.Labels, ","), "repository_id": b.RepositoryID}
			if err := c.addValues(p, g.Values); err != nil {
				return nil, err
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// scmFilter is one compiled filter.
type scmFilter struct {
	repo, branch, label *regexp.Regexp
	exist, notExist     []string
}

func compileSCMFilters(filters []SCMProviderFilter) (repoFilters, branchFilters []scmFilter, err error) {
	compile := func(name string, s *string) (*regexp.Regexp, error) {
		if s == nil {
			return nil, nil
		}
		re, err := regexp.Compile(*s)
		if err != nil {
			return nil, fmt.Errorf("filters: %s %q: %w", name, *s, err)
		}
		return re, nil
	}
	for _, f := range filters {
		var cf scmFilter
		if cf.repo, err = compile("repositoryMatch", f.RepositoryMatch); err != nil {
			return nil, nil, err
		}
		if cf.label, err = compile("labelMatch", f.LabelMatch); err != nil {
			return nil, nil, err
		}
		if cf.branch, err = compile("branchMatch", f.BranchMatch); err != nil {
			return nil, nil, err
		}
		cf.exist, cf.notExist = f.PathsExist, f.PathsDoNotExist
		switch {
		case f.PathsExist != nil || f.PathsDoNotExist != nil || f.BranchMatch != nil:
			branchFilters = append(branchFilters, cf)
		case f.RepositoryMatch != nil || f.LabelMatch != nil:
			repoFilters = append(repoFilters, cf)
		}
	}
	return repoFilters, branchFilters, nil
}

// anyFilter reports whether r passes one of filters (true when there are
// none).
func anyFilter(ctx context.Context, svc SCMService, filters []scmFilter, r SCMRepository) (bool, error) {
	if len(filters) == 0 {
		return true, nil
	}
	for _, f := range filters {
		ok, err := f.matches(ctx, svc, r)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

func (f scmFilter) matches(ctx context.Context, svc SCMService, r SCMRepository) (bool, error) {
	if f.repo != nil && !f.repo.MatchString(r.Repository) {
		return false, nil
	}
	if f.branch != nil && !f.branch.MatchString(r.Branch) {
		return false, nil
	}
	if f.label != nil && !slices.ContainsFunc(r.Labels, f.label.MatchString) {
		return false, nil
	}
	for _, p := range f.exist {
		has, err := svc.HasPath(ctx, r, strings.TrimRight(p, "/"))
		if err != nil || !has {
			return false, err
		}
	}
	for _, p := range f.notExist {
		has, err := svc.HasPath(ctx, r, strings.TrimRight(p, "/"))
		if err != nil || has {
			return false, err
		}
	}
	return true, nil
}

func short(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
