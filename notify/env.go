package notify

import (
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Env is what a trigger's expressions see: "app" (the Application as a
// JSON-shaped map, appstatus.Object's), and the helpers "time" (Now,
// Parse), "repo" (RepoURLToHTTPS, FullNameByRepoURL, QueryEscape) and
// "strings" (ReplaceAll, ToUpper, ToLower), as in Argo CD. Argo CD's
// repo.GetCommitMetadata and repo.GetAppDetails need its repo server and
// are not here: an expression that calls them does not compile.
type Env map[string]any

// NewEnv is the environment of the Application app.
func NewEnv(app map[string]any) Env {
	return Env{"app": app, "time": TimeFuncs{}, "repo": RepoFuncs{}, "strings": StringFuncs{}}
}

// TimeFuncs are the expression helpers under "time".
type TimeFuncs struct{}

// Now is the current time.
func (TimeFuncs) Now() time.Time { return time.Now() }

// Parse parses an RFC 3339 timestamp, as Kubernetes writes them.
func (TimeFuncs) Parse(s string) (time.Time, error) { return time.Parse(time.RFC3339, s) }

// StringFuncs are the expression helpers under "strings".
type StringFuncs struct{}

// ReplaceAll is strings.ReplaceAll.
func (StringFuncs) ReplaceAll(s, old, new string) string { return strings.ReplaceAll(s, old, new) }

// ToUpper is strings.ToUpper.
func (StringFuncs) ToUpper(s string) string { return strings.ToUpper(s) }

// ToLower is strings.ToLower.
func (StringFuncs) ToLower(s string) string { return strings.ToLower(s) }

// RepoFuncs are the offline repository helpers under "repo".
type RepoFuncs struct{}

var scpLike = regexp.MustCompile(`^(?:[\w.-]+@)?([\w.-]+):(?:/)?([^/].*)$`)

// RepoURLToHTTPS turns a Git URL (ssh://, git@host:path, http://) into its
// https:// form without ".git", for links to the repository's web pages.
func (RepoFuncs) RepoURLToHTTPS(u string) string {
	if m := scpLike.FindStringSubmatch(u); m != nil && !strings.Contains(u, "://") {
		return "https://" + m[1] + "/" + strings.TrimSuffix(m[2], ".git")
	}
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return u
	}
	return "https://" + p.Hostname() + strings.TrimSuffix(p.Path, ".git")
}

// FullNameByRepoURL is the repository's "owner/name" (the URL's path
// without ".git").
func (r RepoFuncs) FullNameByRepoURL(u string) string {
	p, err := url.Parse(r.RepoURLToHTTPS(u))
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(p.Path, "/")
}

// QueryEscape is url.QueryEscape.
func (RepoFuncs) QueryEscape(s string) string { return url.QueryEscape(s) }

// templateHelpers are the same helpers as functions in maps, the shape Go
// templates call them in (`{{call .repo.RepoURLToHTTPS .app.spec.source.repoURL}}`).
func templateHelpers() map[string]any {
	t, r, s := TimeFuncs{}, RepoFuncs{}, StringFuncs{}
	return map[string]any{
		"time":    map[string]any{"Now": t.Now, "Parse": t.Parse},
		"repo":    map[string]any{"RepoURLToHTTPS": r.RepoURLToHTTPS, "FullNameByRepoURL": r.FullNameByRepoURL, "QueryEscape": r.QueryEscape},
		"strings": map[string]any{"ReplaceAll": s.ReplaceAll, "ToUpper": s.ToUpper, "ToLower": s.ToLower},
	}
}
