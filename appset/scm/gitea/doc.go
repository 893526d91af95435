// Package gitea is the ApplicationSet provider of Gitea (and Forgejo) for
// scmProvider and pullRequest generators (key "gitea"), with Gitea's Go
// SDK, as Argo CD's:
//
//   - scmProvider: the repositories of owner (archived ones left out under
//     excludeArchivedRepos), page by page (Argo CD reads the first page
//     only); labels are the repository's labels; url is the SSH URL, or
//     the web URL under cloneProtocol https (Argo CD's choice);
//   - pullRequest: the open pull requests of owner/repo carrying every one
//     of labels;
//   - api is the server; tokenRef reads a token; insecure skips the
//     certificate's verification.
package gitea
