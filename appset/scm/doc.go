// Package scm holds what Argo CD's ApplicationSet forge providers share:
// their options (where tokenRef Secrets and caRef ConfigMaps are read,
// token-ref strict mode, timeouts, trusted CAs), the strict decoding of
// a generator's provider block (ConfigError names the field), tokens read
// from Secrets without ever printing them, cloneProtocol's choice of
// clone URL, and RateLimits, the transport every provider talks through:
// a 429, or a 403 with Retry-After or a spent quota, is waited out when
// the forge asks for at most MaxRateLimitWait, and otherwise fails the
// generator with a *RateLimitError (the set keeps its last good
// Applications).
//
// Each forge lives in a subpackage with its own client, so a host pays
// only for what it imports: github (go-github, GitHub Enterprise, GitHub
// App auth through ghinstallation), gitlab (GitLab's client-go), gitea
// (Gitea's SDK), bitbucketserver, bitbucketcloud and azuredevops (their
// documented REST APIs over net/http). Package all registers them all
// under Argo CD's keys. Their tests run against in-process servers
// answering as each forge's API documents (internal/forgetest), with its
// paging and rate-limit answers; the gitea provider is also tested
// against a real Gitea when one was built (see its package).
package scm
