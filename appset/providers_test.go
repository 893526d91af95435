package appset

import (
	"testing"
)

func TestSCMProviderAndPullRequestGenerators(t *testing.T) {
	opts := DefaultOptions()
	opts.SCMProviders = map[string]SCMProvider{"github": StaticSCM{
		Repos: []SCMRepository{
			{Organization: "org", Repository: "svc-a", URL: "https://github.com/org/svc-a.git", Branch: "main", SHA: "0123456789abcdef", Labels: []string{"deploy"}},
			{Organization: "org", Repository: "svc-b", URL: "https://github.com/org/svc-b.git", Branch: "main", SHA: "fedcba9876543210"},
			{Organization: "org", Repository: "docs", URL: "https://github.com/org/docs.git", Branch: "main", SHA: "aaaaaaaaaaaaaaaa"},
		},
		Paths: map[string][]string{"org/svc-a/main": {"deploy"}, "org/svc-b/main": {"deploy"}},
	}}
	opts.PullRequestProviders = map[string]PullRequestProvider{"gitlab": StaticPullRequests{
		{Number: 7, Title: "Add feature", Branch: "feature/Login", TargetBranch: "main", HeadSHA: "abcdef0123456789", Author: "ann", Labels: []string{"preview"}},
		{Number: 8, Title: "Hotfix", Branch: "hotfix", TargetBranch: "release", HeadSHA: "0000000011111111"},
	}}
	res := generate(t, loadOne(t, header+`  generators:
  - scmProvider:
      github: {organization: org}
      filters:
      - {repositoryMatch: ^svc, pathsExist: [deploy]}
      values: {env: '{{branch}}'}
      template:
        metadata: {name: '{{repository}}-{{short_sha_7}}'}
        spec: {destination: {namespace: '{{values.env}}-{{labels}}'}}
  - pullRequest:
      gitlab: {project: "1"}
      filters: [{targetBranchMatch: ^main$}]
      template:
        metadata: {name: 'pr-{{number}}-{{branch_slug}}'}
        spec: {destination: {namespace: '{{head_short_sha}}-{{author}}'}}
  template:
    metadata: {name: unused}
    spec: {destination: {server: x}}
`), opts)
	got := map[string]string{}
	for _, a := range res.Applications {
		got[a.GetName()] = field(t, a, "spec", "destination", "namespace")
	}
	want := map[string]string{"svc-a-0123456": "main-deploy", "svc-b-fedcba9": "main-", "pr-7-feature-login": "abcdef01-ann"}
	if !mapsEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
