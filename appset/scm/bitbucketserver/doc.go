// Package bitbucketserver is the ApplicationSet provider of Bitbucket
// Server and Data Center for scmProvider and pullRequest generators (key
// "bitbucketServer"), over its REST API 1.0 with net/http (Argo CD uses
// an unmaintained generated client; the few documented endpoints are
// called directly):
//
//   - scmProvider: the repositories of project, page by page (start,
//     limit, isLastPage, nextPageStart), each at its default branch (a
//     repository without one is left out); url is the ssh clone link, or
//     the http one under cloneProtocol https; there are no labels;
//     pathsExist browses the path at the branch;
//   - pullRequest: the open pull requests of project/repo;
//   - basicAuth (username, passwordRef) or bearerToken (tokenRef)
//     authenticate; caRef and insecure as for GitLab.
package bitbucketserver
