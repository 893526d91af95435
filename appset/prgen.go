package appset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// pullRequest yields a set per open pull request passing a filter (any
// filter; every field of one must match): number, title, branch,
// branch_slug, target_branch, target_branch_slug, head_sha,
// head_short_sha, head_short_sha_7, author, labels and values. With
// continueOnRepoNotFoundError a repository the forge does not know yields
// nothing instead of failing.
func (c *genCtx) pullRequest(ctx context.Context, g *PullRequestGenerator) ([]Params, error) {
	key, cfg, err := providerKey(map[string]json.RawMessage{"github": g.Github, "gitlab": g.Gitlab, "gitea": g.Gitea,
		"bitbucket": g.Bitbucket, "bitbucketServer": g.BitbucketServer, "azureDevOps": g.AzureDevOps})
	if err != nil {
		return nil, err
	}
	if err := c.r.opts.SCM.check(cfg); err != nil {
		return nil, fmt.Errorf("pullRequest %s: %w", key, err)
	}
	prov, ok := c.r.opts.PullRequestProviders[key]
	if !ok {
		return nil, fmt.Errorf("%w: pullRequest provider %q is not registered by the host", ErrNoProvider, key)
	}
	filters, err := compilePRFilters(g.Filters)
	if err != nil {
		return nil, err
	}
	prs, err := prov.PullRequests(ctx, PullRequestRequest{Namespace: c.set.Namespace, Config: cfg})
	if err != nil {
		if g.ContinueOnRepoNotFoundError && errors.Is(err, ErrRepositoryNotFound) {
			return nil, nil
		}
		return nil, fmt.Errorf("pullRequest %s: %w", key, err)
	}
	var out []Params
	for _, pr := range prs {
		if !prPasses(filters, pr) {
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
		if err := c.addValues(p, g.Values); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// slug is Argo CD's branch_slug: lowercase, runs of other characters
// than a-z and 0-9 turned into "-", at most 50 characters cut at a word.
func slug(s string) string { v, _ := slugify(s); return v }

// prFilter is one compiled pull request filter.
type prFilter struct{ branch, target, title *regexp.Regexp }

func compilePRFilters(filters []PullRequestFilter) ([]prFilter, error) {
	out := make([]prFilter, 0, len(filters))
	for _, f := range filters {
		var pf prFilter
		for _, m := range []struct {
			name string
			src  *string
			dst  **regexp.Regexp
		}{{"branchMatch", f.BranchMatch, &pf.branch}, {"targetBranchMatch", f.TargetBranchMatch, &pf.target}, {"titleMatch", f.TitleMatch, &pf.title}} {
			if m.src == nil {
				continue
			}
			re, err := regexp.Compile(*m.src)
			if err != nil {
				return nil, fmt.Errorf("filters: %s %q: %w", m.name, *m.src, err)
			}
			*m.dst = re
		}
		out = append(out, pf)
	}
	return out, nil
}

func prPasses(filters []prFilter, pr PullRequest) bool {
	if len(filters) == 0 {
		return true
	}
	for _, f := range filters {
		if (f.branch == nil || f.branch.MatchString(pr.Branch)) &&
			(f.target == nil || f.target.MatchString(pr.TargetBranch)) &&
			(f.title == nil || f.title.MatchString(pr.Title)) {
			return true
		}
	}
	return false
}
