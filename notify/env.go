package notify

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Env is what a trigger's expressions see, Argo CD's environment: "app"
// (the Application as a JSON-shaped map, appstatus.Object's) and the
// helpers "time" (Now, Parse, the durations Nanosecond to Hour, the layouts
// RFC3339, Kitchen, ...), "repo" (RepoURLToHTTPS, FullNameByRepoURL,
// QueryEscape, GetCommitMetadata, GetAppDetails), "strings" (ReplaceAll,
// ToUpper, ToLower) and "sync" (GetInfoItem). Templates see the same
// helpers as .time, .repo, .strings and .sync.
type Env map[string]any

// RepoService answers the helpers that need a repository server:
// repo.GetCommitMetadata and repo.GetAppDetails. A host gives one through
// LoadOptions.Repo; without it those helpers fail when called (a condition
// that calls one is false, a template that calls one does not render), with
// a *NoRepoServiceError.
type RepoService interface {
	// GetCommitMetadata returns the metadata of commit sha of repoURL, for
	// an Application of project.
	GetCommitMetadata(ctx context.Context, repoURL, sha, project string) (CommitMetadata, error)
	// GetAppDetails returns what the repository server says of the
	// Application's source (Argo CD's shared.AppDetail: type, helm,
	// kustomize, directory details), as a JSON-shaped map.
	GetAppDetails(ctx context.Context, app map[string]any) (map[string]any, error)
}

// CommitMetadata is a commit's metadata, the value of repo.GetCommitMetadata
// (Argo CD's shared.CommitMetadata).
type CommitMetadata struct {
	// Message is the commit message.
	Message string
	// Author is the commit's author.
	Author string
	// Date is when the commit was made.
	Date time.Time
	// Tags are the tags pointing at the commit.
	Tags []string
}

// NoRepoServiceError reports a call of a repo helper that needs a
// repository server when LoadOptions.Repo is not set.
type NoRepoServiceError struct {
	// Helper is "GetCommitMetadata" or "GetAppDetails".
	Helper string
}

// Error implements error.
func (e *NoRepoServiceError) Error() string {
	return fmt.Sprintf("repo.%s needs a repository server: notify.LoadOptions.Repo is not set", e.Helper)
}

// repoCallTimeout bounds one call of a RepoService from an expression.
const repoCallTimeout = 30 * time.Second

// NewEnv is the environment of the Application app, without a repository
// server (see Config.Env).
func NewEnv(app map[string]any) Env { return newEnv(app, nil) }

// Env is the environment of the Application app with the configuration's
// repository server (LoadOptions.Repo), the one the Controller uses.
func (c *Config) Env(app map[string]any) Env { return newEnv(app, c.repo) }

func newEnv(app map[string]any, svc RepoService) Env {
	return Env{"app": app, "time": newTimeFuncs(), "repo": RepoFuncs{app: app, svc: svc}, "strings": StringFuncs{}, "sync": SyncFuncs{}}
}

// TimeFuncs are the expression helpers under "time": Now and Parse, the
// durations and the layouts of Go's time package, as in Argo CD.
type TimeFuncs struct {
	// Nanosecond to Hour are time's durations.
	Nanosecond, Microsecond, Millisecond, Second, Minute, Hour time.Duration

	// Layout to StampNano are time's layouts.
	Layout, ANSIC, UnixDate, RubyDate, RFC822, RFC822Z, RFC850, RFC1123, RFC1123Z,
	RFC3339, RFC3339Nano, Kitchen, Stamp, StampMilli, StampMicro, StampNano string
}

func newTimeFuncs() TimeFuncs {
	return TimeFuncs{
		Nanosecond: time.Nanosecond, Microsecond: time.Microsecond, Millisecond: time.Millisecond,
		Second: time.Second, Minute: time.Minute, Hour: time.Hour,
		Layout: time.Layout, ANSIC: time.ANSIC, UnixDate: time.UnixDate, RubyDate: time.RubyDate,
		RFC822: time.RFC822, RFC822Z: time.RFC822Z, RFC850: time.RFC850, RFC1123: time.RFC1123,
		RFC1123Z: time.RFC1123Z, RFC3339: time.RFC3339, RFC3339Nano: time.RFC3339Nano, Kitchen: time.Kitchen,
		Stamp: time.Stamp, StampMilli: time.StampMilli, StampMicro: time.StampMicro, StampNano: time.StampNano,
	}
}

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

// SyncFuncs are the expression helpers under "sync".
type SyncFuncs struct{}

// GetInfoItem returns the value of the item called name of the
// Application's sync operation info (operation.info, the --info of
// "argocd app sync"); it is an error when there is none.
func (SyncFuncs) GetInfoItem(app map[string]any, name string) (string, error) {
	op, _ := app["operation"].(map[string]any)
	items, _ := op["info"].([]any)
	for _, it := range items {
		if m, ok := it.(map[string]any); ok && m["name"] == name {
			v, _ := m["value"].(string)
			return v, nil
		}
	}
	return "", fmt.Errorf("application %s has no sync operation info item %q", appID(app), name)
}

// RepoFuncs are the repository helpers under "repo", for one Application.
type RepoFuncs struct {
	app map[string]any
	svc RepoService
}

var scpLike = regexp.MustCompile(`^(?:[\w.-]+@)?([\w.-]+):(?:/)?([^/].*)$`)

// parseRepoURL parses a Git URL, scp-like (git@host:path) ones included.
func parseRepoURL(u string) (*url.URL, error) {
	if m := scpLike.FindStringSubmatch(u); m != nil && !strings.Contains(u, "://") {
		return &url.URL{Scheme: "ssh", Host: m[1], Path: "/" + m[2]}, nil
	}
	p, err := url.Parse(u)
	if err != nil {
		return nil, err
	}
	if p.Host == "" {
		return nil, fmt.Errorf("repository URL %q has no host", u)
	}
	return p, nil
}

// RepoURLToHTTPS turns a Git URL (ssh://, git@host:path, http://) into its
// https:// form, as Argo CD does: the scheme is https, the user is dropped,
// host, port and path (".git" included) are kept.
func (RepoFuncs) RepoURLToHTTPS(u string) (string, error) {
	p, err := parseRepoURL(u)
	if err != nil {
		return "", err
	}
	p.Scheme, p.User = "https", nil
	return p.String(), nil
}

// FullNameByRepoURL is the repository's "owner/name": the first two parts
// of the URL's path, without ".git".
func (RepoFuncs) FullNameByRepoURL(u string) (string, error) {
	p, err := parseRepoURL(u)
	if err != nil {
		return "", err
	}
	var parts []string
	for _, s := range strings.Split(strings.TrimSuffix(p.Path, ".git"), "/") {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) >= 2 {
		return parts[0] + "/" + parts[1], nil
	}
	return strings.TrimSuffix(p.Path, ".git"), nil
}

// QueryEscape is url.QueryEscape.
func (RepoFuncs) QueryEscape(s string) string { return url.QueryEscape(s) }

// GetCommitMetadata is the metadata of commit sha of the Application's
// spec.source.repoURL, from the RepoService.
func (r RepoFuncs) GetCommitMetadata(sha string) (CommitMetadata, error) {
	if r.svc == nil {
		return CommitMetadata{}, &NoRepoServiceError{Helper: "GetCommitMetadata"}
	}
	spec, _ := r.app["spec"].(map[string]any)
	source, _ := spec["source"].(map[string]any)
	repoURL, _ := source["repoURL"].(string)
	project, _ := spec["project"].(string)
	if repoURL == "" {
		return CommitMetadata{}, fmt.Errorf("application %s has no spec.source.repoURL", appID(r.app))
	}
	ctx, cancel := context.WithTimeout(context.Background(), repoCallTimeout)
	defer cancel()
	return r.svc.GetCommitMetadata(ctx, repoURL, sha, project)
}

// GetAppDetails is what the RepoService says of the Application's source.
func (r RepoFuncs) GetAppDetails() (map[string]any, error) {
	if r.svc == nil {
		return nil, &NoRepoServiceError{Helper: "GetAppDetails"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), repoCallTimeout)
	defer cancel()
	return r.svc.GetAppDetails(ctx, r.app)
}

// templateHelpers are the same helpers as functions in maps, the shape Go
// templates call them in (`{{call .repo.RepoURLToHTTPS .app.spec.source.repoURL}}`).
func templateHelpers(app map[string]any, svc RepoService) map[string]any {
	t, r, s, y := newTimeFuncs(), RepoFuncs{app: app, svc: svc}, StringFuncs{}, SyncFuncs{}
	return map[string]any{
		"time": map[string]any{"Now": t.Now, "Parse": t.Parse,
			"Nanosecond": t.Nanosecond, "Microsecond": t.Microsecond, "Millisecond": t.Millisecond,
			"Second": t.Second, "Minute": t.Minute, "Hour": t.Hour, "RFC3339": t.RFC3339},
		"repo": map[string]any{"RepoURLToHTTPS": r.RepoURLToHTTPS, "FullNameByRepoURL": r.FullNameByRepoURL,
			"QueryEscape": r.QueryEscape, "GetCommitMetadata": r.GetCommitMetadata, "GetAppDetails": r.GetAppDetails},
		"strings": map[string]any{"ReplaceAll": s.ReplaceAll, "ToUpper": s.ToUpper, "ToLower": s.ToLower},
		"sync":    map[string]any{"GetInfoItem": y.GetInfoItem},
	}
}
