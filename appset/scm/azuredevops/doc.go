// Package azuredevops is the ApplicationSet provider of Azure DevOps
// (Services and Server) for scmProvider and pullRequest generators (keys
// "azureDevOps" and, in pullRequest generators, "azuredevops"), over its
// Git REST API (api-version 7.1) with net/http, a personal access token
// sent as basic auth:
//
//   - scmProvider: the repositories of organization/teamProject (disabled
//     ones and those without a default branch left out), each at its
//     default branch or every branch under allBranches (the branch
//     statistics API); url is the remote (https) URL, or the SSH one under
//     cloneProtocol ssh; there are no labels; pathsExist asks for the item
//     at the branch;
//   - pullRequest: the active pull requests of organization/project/repo
//     ($top and $skip pages) carrying every one of labels; author is the
//     creator's unique name before its "@", as in Argo CD.
package azuredevops
