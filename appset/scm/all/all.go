// Package all registers Argo CD's ApplicationSet forge providers under
// Argo CD's keys, for a host that serves every forge (the operator):
// github (GitHub and GitHub Enterprise), gitlab, gitea, bitbucketServer,
// bitbucket (Bitbucket Cloud) and azureDevOps. A host that serves one
// forge imports that provider's package alone and pays only for its
// client. awsCodeCommit has no provider here: a set naming it fails with
// appset.ErrNoProvider.
package all

import (
	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/appset/scm"
	"github.com/kubegitops/gitops/appset/scm/azuredevops"
	"github.com/kubegitops/gitops/appset/scm/bitbucketcloud"
	"github.com/kubegitops/gitops/appset/scm/bitbucketserver"
	"github.com/kubegitops/gitops/appset/scm/gitea"
	"github.com/kubegitops/gitops/appset/scm/github"
	"github.com/kubegitops/gitops/appset/scm/gitlab"
)

// Providers are the scmProvider and pullRequest providers of every forge.
type Providers struct {
	// SCM are the scmProvider providers, by generator key ("github").
	SCM map[string]appset.SCMProvider
	// PullRequests are the pullRequest providers, by generator key.
	PullRequests map[string]appset.PullRequestProvider
}

// New returns every forge's provider with opts.
func New(opts scm.Options) Providers {
	gh, gl, gt := github.New(opts), gitlab.New(opts), gitea.New(opts)
	bbs, bbc, az := bitbucketserver.New(opts), bitbucketcloud.New(opts), azuredevops.New(opts)
	return Providers{
		SCM: map[string]appset.SCMProvider{github.Key: gh, gitlab.Key: gl, gitea.Key: gt,
			bitbucketserver.Key: bbs, bitbucketcloud.Key: bbc, azuredevops.Key: az},
		PullRequests: map[string]appset.PullRequestProvider{github.Key: gh, gitlab.Key: gl, gitea.Key: gt,
			bitbucketserver.Key: bbs, bitbucketcloud.Key: bbc, azuredevops.Key: az},
	}
}

// Register sets o's providers to every forge's, keeping any a host set
// itself under a key.
func Register(o *appset.Options, opts scm.Options) {
	p := New(opts)
	if o.SCMProviders == nil {
		o.SCMProviders = map[string]appset.SCMProvider{}
	}
	if o.PullRequestProviders == nil {
		o.PullRequestProviders = map[string]appset.PullRequestProvider{}
	}
	for k, v := range p.SCM {
		if _, set := o.SCMProviders[k]; !set {
			o.SCMProviders[k] = v
		}
	}
	for k, v := range p.PullRequests {
		if _, set := o.PullRequestProviders[k]; !set {
			o.PullRequestProviders[k] = v
		}
	}
}
