// Package webhook is the ApplicationSet webhook, as Argo CD's
// ApplicationSet controller serves it: a forge's pull request event
// refreshes at once the sets whose pullRequest generator lists that
// repository (PullRequestEvent.Refreshes), instead of waiting for
// requeueAfterSeconds; pushes are handed on as source/webhook hints (git
// generators).
//
// Events are verified as source/webhook verifies pushes (an HMAC of the
// body for GitHub, Gitea, Gogs and Bitbucket, GitLab's token), and Azure
// DevOps service hooks by basic auth. The actions that refresh are Argo
// CD's (GitHub: opened, closed, synchronize, labeled, reopened,
// unlabeled; GitLab: open, close, reopen, update, merge; Azure DevOps:
// created, merged, updated) and their Gitea and Bitbucket equivalents
// (which Argo CD's webhook does not take). A repository is matched by
// owner and name (case-insensitive), GitLab's project id or path, and the
// forge's host when the payload names it.
package webhook
