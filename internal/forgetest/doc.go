// Package forgetest serves a forge's state (organisations, repositories,
// branches, files, pull requests) in-process, through the REST APIs of
// GitHub, GitLab, Gitea, Bitbucket Server, Bitbucket Cloud and Azure
// DevOps as their documentation describes the endpoints Argo CD's
// ApplicationSet providers call: the same JSON fields, the forge's own
// paging (GitHub's Link headers, GitLab's X-Next-Page, Bitbucket
// Server's isLastPage/nextPageStart, Bitbucket Cloud's next URL, Azure
// DevOps' $top/$skip), its token header, 404 for what does not exist, and
// rate-limit answers (403/429 with Retry-After or reset headers) queued by
// LimitNext.
//
// It is for the tests of package appset/scm and the programs that run it;
// the pages are small (PageSize) so that three repositories take two.
package forgetest
