package webhook

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/kubegitops/gitops/appset"
	srcwebhook "github.com/kubegitops/gitops/source/webhook"
)

// The providers of pull request events, by the key of the pullRequest
// generator's block they refresh.
const (
	GitHub          = "github"
	GitLab          = "gitlab"
	Gitea           = "gitea"
	BitbucketServer = "bitbucketServer"
	Bitbucket       = "bitbucket"
	AzureDevOps     = "azureDevOps"
)

// ErrNotPullRequest: the event is not a pull request event that changes
// what a pullRequest generator lists (Argo CD's allowed actions).
var ErrNotPullRequest = errors.New("not a pull request event")

// PullRequestEvent is the repository a pull request event is about.
type PullRequestEvent struct {
	// Provider is the generator block's key it refreshes.
	Provider string
	// Action is the event's action ("opened", "close", "pr:merged", ...).
	Action string
	// Owner and Repo name the repository: the owner (GitHub, Gitea), the
	// project key (Bitbucket Server), the workspace (Bitbucket Cloud), or
	// the project (Azure DevOps); and the repository's name or slug.
	Owner, Repo string
	// ProjectID and ProjectPath are GitLab's target project.
	ProjectID, ProjectPath string
	// Host is the forge's host as the payload names it ("" when it does
	// not).
	Host string
}

// allowed are the actions that change a pull request list, as Argo CD's
// webhook lists them (and their Gitea and Bitbucket equivalents).
var allowed = map[string][]string{
	GitHub:          {"opened", "closed", "synchronize", "labeled", "reopened", "unlabeled"},
	Gitea:           {"opened", "closed", "synchronized", "label_updated", "label_cleared", "reopened"},
	GitLab:          {"open", "close", "reopen", "update", "merge"},
	BitbucketServer: {"pr:opened", "pr:from_ref_updated", "pr:declined", "pr:merged", "pr:deleted"},
	Bitbucket:       {"pullrequest:created", "pullrequest:updated", "pullrequest:fulfilled", "pullrequest:rejected"},
	AzureDevOps:     {"git.pullrequest.created", "git.pullrequest.merged", "git.pullrequest.updated"},
}

// ParsePullRequest reads a verified event of provider (source/webhook's
// names; "azuredevops" for Azure DevOps) whose event name is event. It
// returns ErrNotPullRequest for any other event.
func ParsePullRequest(provider srcwebhook.Provider, event string, body []byte) (*PullRequestEvent, error) {
	var ev PullRequestEvent
	switch provider {
	case srcwebhook.GitHub, srcwebhook.Gitea:
		if event != "pull_request" {
			return nil, ErrNotPullRequest
		}
		var p struct {
			Action     string `json:"action"`
			Repository struct {
				Name  string `json:"name"`
				Owner struct {
					Login    string `json:"login"`
					Username string `json:"username"`
				} `json:"owner"`
				URL     string `json:"url"`
				HTMLURL string `json:"html_url"`
			} `json:"repository"`
		}
		if err := json.Unmarshal(body, &p); err != nil {
			return nil, err
		}
		ev = PullRequestEvent{Provider: GitHub, Action: p.Action, Owner: p.Repository.Owner.Login, Repo: p.Repository.Name, Host: host(p.Repository.URL)}
		if provider == srcwebhook.Gitea {
			ev.Provider, ev.Host = Gitea, host(p.Repository.HTMLURL)
			if ev.Owner == "" {
				ev.Owner = p.Repository.Owner.Username
			}
		}
	case srcwebhook.GitLab:
		if event != "Merge Request Hook" {
			return nil, ErrNotPullRequest
		}
		var p struct {
			Project struct {
				ID                int64  `json:"id"`
				PathWithNamespace string `json:"path_with_namespace"`
				WebURL            string `json:"web_url"`
			} `json:"project"`
			ObjectAttributes struct {
				Action          string `json:"action"`
				TargetProjectID int64  `json:"target_project_id"`
			} `json:"object_attributes"`
		}
		if err := json.Unmarshal(body, &p); err != nil {
			return nil, err
		}
		id := p.ObjectAttributes.TargetProjectID
		if id == 0 {
			id = p.Project.ID
		}
		ev = PullRequestEvent{Provider: GitLab, Action: p.ObjectAttributes.Action, ProjectID: strconv.FormatInt(id, 10),
			ProjectPath: p.Project.PathWithNamespace, Host: host(p.Project.WebURL)}
	case srcwebhook.BitbucketServer:
		var p struct {
			PullRequest struct {
				ToRef struct {
					Repository struct {
						Slug    string `json:"slug"`
						Project struct {
							Key string `json:"key"`
						} `json:"project"`
					} `json:"repository"`
				} `json:"toRef"`
			} `json:"pullRequest"`
		}
		if !strings.HasPrefix(event, "pr:") {
			return nil, ErrNotPullRequest
		}
		if err := json.Unmarshal(body, &p); err != nil {
			return nil, err
		}
		r := p.PullRequest.ToRef.Repository
		ev = PullRequestEvent{Provider: BitbucketServer, Action: event, Owner: r.Project.Key, Repo: r.Slug}
	case srcwebhook.Bitbucket:
		if !strings.HasPrefix(event, "pullrequest:") {
			return nil, ErrNotPullRequest
		}
		var p struct {
			Repository struct {
				FullName string `json:"full_name"`
			} `json:"repository"`
		}
		if err := json.Unmarshal(body, &p); err != nil {
			return nil, err
		}
		owner, repo, _ := strings.Cut(p.Repository.FullName, "/")
		ev = PullRequestEvent{Provider: Bitbucket, Action: event, Owner: owner, Repo: repo}
	case "azuredevops":
		var p struct {
			EventType string `json:"eventType"`
			Resource  struct {
				Repository struct {
					Name    string `json:"name"`
					Project struct {
						Name string `json:"name"`
					} `json:"project"`
				} `json:"repository"`
			} `json:"resource"`
		}
		if err := json.Unmarshal(body, &p); err != nil {
			return nil, err
		}
		if !strings.HasPrefix(p.EventType, "git.pullrequest.") {
			return nil, ErrNotPullRequest
		}
		ev = PullRequestEvent{Provider: AzureDevOps, Action: p.EventType, Owner: p.Resource.Repository.Project.Name, Repo: p.Resource.Repository.Name}
	default:
		return nil, ErrNotPullRequest
	}
	if !slices.Contains(allowed[ev.Provider], ev.Action) {
		return nil, ErrNotPullRequest
	}
	if ev.Repo == "" && ev.ProjectID == "" {
		return nil, fmt.Errorf("%s pull request event names no repository", ev.Provider)
	}
	return &ev, nil
}

func host(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

// block is the fields of a pullRequest generator's provider block the
// events are matched on.
type block struct {
	Owner, Repo, Project, API, Organization string
}

// Matches reports whether the event is about the repository a
// pullRequest generator lists, as Argo CD matches them: owner and
// repository (case-insensitive), GitLab's project (id or path), and the
// forge's host when both name one (the block's api, or the public
// service's).
func (ev *PullRequestEvent) Matches(g *appset.PullRequestGenerator) bool {
	if g == nil {
		return false
	}
	raw := map[string]json.RawMessage{GitHub: g.Github, GitLab: g.Gitlab, Gitea: g.Gitea, BitbucketServer: g.BitbucketServer,
		Bitbucket: g.Bitbucket, AzureDevOps: g.AzureDevOps}[ev.Provider]
	if len(raw) == 0 || string(raw) == "null" {
		return false
	}
	var b block
	if json.Unmarshal(raw, &b) != nil {
		return false
	}
	sameHost := func(api, public string) bool {
		if api == "" {
			api = public
		}
		return ev.Host == "" || api == "" || host(api) == ev.Host
	}
	switch ev.Provider {
	case GitHub:
		return strings.EqualFold(b.Owner, ev.Owner) && strings.EqualFold(b.Repo, ev.Repo) && sameHost(b.API, "https://api.github.com/")
	case Gitea:
		return strings.EqualFold(b.Owner, ev.Owner) && strings.EqualFold(b.Repo, ev.Repo) && sameHost(b.API, "")
	case GitLab:
		return (b.Project == ev.ProjectID || strings.EqualFold(b.Project, ev.ProjectPath)) && sameHost(b.API, "https://gitlab.com/")
	case BitbucketServer, Bitbucket:
		owner := b.Owner
		if ev.Provider == BitbucketServer {
			owner = b.Project
		}
		return strings.EqualFold(owner, ev.Owner) && strings.EqualFold(b.Repo, ev.Repo)
	case AzureDevOps:
		return strings.EqualFold(b.Project, ev.Owner) && strings.EqualFold(b.Repo, ev.Repo)
	}
	return false
}

// Refreshes reports whether a set has a pullRequest generator (nested in
// matrix and merge included) the event matches.
func (ev *PullRequestEvent) Refreshes(gens []appset.Generator) bool {
	for i := range gens {
		g := &gens[i]
		switch {
		case g.PullRequest != nil && ev.Matches(g.PullRequest):
			return true
		case g.Matrix != nil && ev.Refreshes(g.Matrix.Generators), g.Merge != nil && ev.Refreshes(g.Merge.Generators):
			return true
		}
	}
	return false
}

// Options configure a Handler.
type Options struct {
	// Secrets are the forges' webhook secrets (source/webhook's).
	Secrets srcwebhook.Secrets
	// AzureDevOpsUsername and AzureDevOpsPassword are the basic-auth
	// credentials Azure DevOps service hooks send (Argo CD's
	// webhook.azuredevops.username and .password); both empty refuse
	// Azure DevOps events.
	AzureDevOpsUsername, AzureDevOpsPassword string
	// OnPullRequest receives each verified pull request event; keep it
	// short (annotate the sets to refresh).
	OnPullRequest func(ctx context.Context, ev *PullRequestEvent)
	// OnPush receives each verified push (git generators' refresh).
	OnPush func(ctx context.Context, h srcwebhook.Hint)
	// MaxBodyBytes caps the body. Default 1 MiB.
	MaxBodyBytes int64
}

// NewHandler returns the ApplicationSet webhook: source/webhook's
// verification and push hints for GitHub, GitLab, Gitea, Gogs and
// Bitbucket, pull request events for the generators, and Azure DevOps
// service hooks (basic auth).
func NewHandler(opts Options) http.Handler {
	on := func(ctx context.Context, p srcwebhook.Provider, event string, body []byte) {
		ev, err := ParsePullRequest(p, event, body)
		if err == nil && opts.OnPullRequest != nil {
			opts.OnPullRequest(ctx, ev)
		}
	}
	inner := srcwebhook.NewHandler(srcwebhook.Options{Secrets: opts.Secrets, MaxBodyBytes: opts.MaxBodyBytes, OnPush: opts.OnPush, OnEvent: on})
	max := opts.MaxBodyBytes
	if max <= 0 {
		max = 1 << 20
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Vss-Activityid") == "" {
			inner.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodPost {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		user, pw, ok := r.BasicAuth()
		if opts.AzureDevOpsUsername == "" && opts.AzureDevOpsPassword == "" || !ok ||
			!equal(user, opts.AzureDevOpsUsername) || !equal(pw, opts.AzureDevOpsPassword) {
			http.Error(w, "authentication failed", http.StatusUnauthorized)
			return
		}
		body, err := readAll(w, r, max)
		if err != nil {
			http.Error(w, "body too large or unreadable", http.StatusRequestEntityTooLarge)
			return
		}
		on(r.Context(), "azuredevops", "", body)
		_, _ = w.Write([]byte("ok\n"))
	})
}

// equal compares in constant time (both hashed first).
func equal(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}

func readAll(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	return io.ReadAll(http.MaxBytesReader(w, r.Body, max))
}
