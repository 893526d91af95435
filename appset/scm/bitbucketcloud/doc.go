// Package bitbucketcloud is the ApplicationSet provider of Bitbucket
// Cloud for scmProvider and pullRequest generators (key "bitbucket"),
// over its REST API 2.0 with net/http:
//
//   - scmProvider: the repositories of the workspace owner, following each
//     page's next URL, with user and appPasswordRef (basic auth); each
//     repository at its main branch or every branch under allBranches;
//     url is the ssh clone link, or the https one under cloneProtocol
//     https; there are no labels;
//   - pullRequest: the open pull requests of owner/repo, with basicAuth
//     or bearerToken; head_sha is the short hash Bitbucket reports;
//   - the API is https://api.bitbucket.org/2.0 (a pullRequest block's api
//     overrides it; WithSCMAPI does for scmProvider).
package bitbucketcloud
