// Package gitlab is the ApplicationSet provider of GitLab (gitlab.com and
// self-managed) for scmProvider and pullRequest generators (key
// "gitlab"), with GitLab's client-go, as Argo CD's:
//
//   - scmProvider: the projects of group (and its subgroups under
//     includeSubgroups; shared ones unless includeSharedProjects is false;
//     archived ones under includeArchivedRepos; those with topic), pages
//     followed through X-Next-Page; labels are the project's topics;
//     url is the SSH URL, or the HTTPS one under cloneProtocol https;
//     pathsExist asks for the file, then the directory's tree;
//   - pullRequest: the merge requests of project in pullRequestState
//     (every state when empty, as Argo CD) carrying every one of labels;
//   - api names a self-managed GitLab; tokenRef reads a token; caRef
//     trusts a ConfigMap's certificates; insecure skips verification.
//
// The client's own retries are off: rate limits are waited out or
// reported by scm.RateLimits.
package gitlab
