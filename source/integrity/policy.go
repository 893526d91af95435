package integrity

import (
	"fmt"
	"strings"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/internal/wildcard"
)

// Selected reports whether a repos list selects repoURL: the URL matches
// a url without "!" and none with "!" (globs without separators, so "*"
// crosses "/"; the URL as written, not normalised), as Argo CD's
// findMatchingGitPolicies decides.
func Selected(repos []v1alpha1.SourceIntegrityGitPolicyRepo, repoURL string) bool {
	include := false
	for _, r := range repos {
		if pattern, deny := strings.CutPrefix(r.URL, "!"); deny {
			if wildcard.Match(pattern, repoURL) {
				return false
			}
			continue
		}
		if wildcard.Match(r.URL, repoURL) {
			include = true
		}
	}
	return include
}

// PolicyFor returns the git policy that applies to repoURL under si, or
// nil when none does (no criteria, no policy selects it, or the policy's
// mode is none). Two policies selecting the URL are an error, Argo CD's.
func PolicyFor(si *v1alpha1.SourceIntegrity, repoURL string) (*v1alpha1.SourceIntegrityGitPolicy, error) {
	if si == nil || si.Git == nil {
		return nil, nil
	}
	var found []*v1alpha1.SourceIntegrityGitPolicy
	for i := range si.Git.Policies {
		if Selected(si.Git.Policies[i].Repos, repoURL) {
			found = append(found, &si.Git.Policies[i])
		}
	}
	switch {
	case len(found) == 0:
		return nil, nil
	case len(found) > 1:
		return nil, fmt.Errorf("multiple (%d) git source integrity policies found for repo URL: %s", len(found), repoURL)
	}
	p := found[0]
	if p.GPG == nil || p.GPG.Mode == v1alpha1.SourceIntegrityGitPolicyGPGModeNone {
		return nil, nil
	}
	switch p.GPG.Mode {
	case v1alpha1.SourceIntegrityGitPolicyGPGModeHead, v1alpha1.SourceIntegrityGitPolicyGPGModeStrict:
		return p, nil
	}
	return nil, fmt.Errorf("unknown GPG mode %q configured for GIT source integrity", p.GPG.Mode)
}
