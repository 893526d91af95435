// Package webhook receives push notifications from Git hosts (GitHub,
// GitLab, Gitea, Gogs, Bitbucket Cloud and Bitbucket Server) and turns
// them into refresh hints: which repository (by every URL the payload
// gives), which ref, which commit and which paths changed.
//
// A hint is only a hint. The receiver never trusts a payload's commit as
// desired state: hosts should refresh the named repository (for example
// Poller.Trigger and git.Source.Invalidate) and let the source resolve the
// ref itself, and may use the changed paths to skip applications whose
// paths were not touched.
//
// Every request must prove it comes from the host: an HMAC-SHA256 of the
// body (GitHub, Gitea, Gogs, Bitbucket) or a shared token (GitLab),
// compared in constant time against each secret configured for that
// provider; a provider with no secret configured is refused. The body is
// read under a cap (1 MiB by default) before anything else; a larger body
// gets 413, a bad or missing signature 401, a malformed payload 400, and
// a valid event that is not a push 202 with no hint. The parser is fuzzed
// (FuzzWebhook) and never panics; responses never echo the payload.
package webhook
