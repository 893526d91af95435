// Package github is the ApplicationSet provider of GitHub and GitHub
// Enterprise for scmProvider and pullRequest generators (key "github"),
// with go-github, as Argo CD's:
//
//   - scmProvider: the repositories of organization (pages of 100,
//     followed through Link headers), archived ones left out under
//     excludeArchivedRepos; labels are the repository's topics; each
//     repository at its default branch, or at every branch under
//     allBranches; url is the SSH clone URL, or the HTTPS one under
//     cloneProtocol https; pathsExist asks the contents API at the branch;
//   - pullRequest: the open pull requests of owner/repo carrying every one
//     of labels; a repository GitHub does not know wraps
//     appset.ErrRepositoryNotFound (continueOnRepoNotFoundError);
//   - api names GitHub Enterprise (its /api/v3/ added when missing);
//     tokenRef reads a token from a Secret of the set's namespace;
//     appSecretName authenticates as a GitHub App installation
//     (ghinstallation) with the githubAppID, githubAppInstallationID,
//     githubAppPrivateKey and githubAppEnterpriseBaseUrl of a Secret in
//     the controller's namespace.
//
// Requests go through scm.Options' client: bounded, rate limits waited
// out or reported as *scm.RateLimitError.
package github
