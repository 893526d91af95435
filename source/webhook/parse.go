package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// Provider names a Git host's webhook dialect.
type Provider string

// Providers understood by Parse and Handler.
const (
	GitHub          Provider = "github"
	GitLab          Provider = "gitlab"
	Gitea           Provider = "gitea"
	Gogs            Provider = "gogs"
	Bitbucket       Provider = "bitbucket"        // Bitbucket Cloud
	BitbucketServer Provider = "bitbucket-server" // Bitbucket Server / Data Center
)

// Hint is what one push says: a ref of a repository moved.
type Hint struct {
	// Provider sent the event.
	Provider Provider `json:"provider"`
	// RepositoryURLs lists every URL the payload gives for the repository
	// (web, HTTPS clone, SSH clone); match them with source.RepositoryKey.
	RepositoryURLs []string `json:"repositoryURLs"`
	// Ref is the fully qualified ref that moved ("refs/heads/main").
	Ref string `json:"ref,omitempty"`
	// Revision is the commit the ref moved to; empty when it was deleted.
	Revision string `json:"revision,omitempty"`
	// ChangedPaths lists the paths the pushed commits added, modified or
	// removed, sorted and deduplicated. Paths that are not clean relative
	// paths are dropped.
	ChangedPaths []string `json:"changedPaths,omitempty"`
	// PathsComplete reports whether ChangedPaths is the full list. Hosts
	// cut long pushes short (GitHub and GitLab list at most 20 commits) and
	// Bitbucket sends no paths; when false, refresh every application of
	// the repository.
	PathsComplete bool `json:"pathsComplete"`
}

// ErrMalformed: the payload is not a valid event of its provider.
var ErrMalformed = errors.New("malformed webhook payload")

// ErrNotPush: the event is valid but not a push; it yields no hint.
var ErrNotPush = errors.New("not a push event")

// maxPaths bounds the changed paths kept per hint.
const maxPaths = 10_000

// Parse decodes the body of one event of provider, whose event name is the
// provider's event header (X-GitHub-Event, X-Gitlab-Event, X-Gitea-Event,
// X-Gogs-Event, X-Event-Key). It returns one hint per ref the push moved,
// ErrNotPush for other events and an error wrapping ErrMalformed for a
// payload that does not decode or names no repository. It does not verify
// signatures: Handler does that before calling it.
func Parse(provider Provider, event string, body []byte) ([]Hint, error) {
	switch provider {
	case GitHub:
		if event != "push" {
			return nil, ErrNotPush
		}
		return parseGitHubLike(provider, body, 20)
	case Gitea, Gogs:
		if event != "push" {
			return nil, ErrNotPush
		}
		return parseGitHubLike(provider, body, 0)
	case GitLab:
		if event != "Push Hook" && event != "Tag Push Hook" && event != "System Hook" {
			return nil, ErrNotPush
		}
		return parseGitLab(body)
	case Bitbucket:
		if event != "repo:push" {
			return nil, ErrNotPush
		}
		return parseBitbucket(body)
	case BitbucketServer:
		if event != "repo:refs_changed" {
			return nil, ErrNotPush
		}
		return parseBitbucketServer(body)
	}
	return nil, fmt.Errorf("unknown provider %q: %w", provider, ErrMalformed)
}

type fileLists struct {
	Added    []string `json:"added"`
	Modified []string `json:"modified"`
	Removed  []string `json:"removed"`
}

// parseGitHubLike reads GitHub, Gitea and Gogs pushes (same shape).
// listCap is the number of commits after which the host may have cut the
// list (0: never).
func parseGitHubLike(provider Provider, body []byte, listCap int) ([]Hint, error) {
	var p struct {
		Ref        string      `json:"ref"`
		After      string      `json:"after"`
		Deleted    bool        `json:"deleted"`
		Commits    []fileLists `json:"commits"`
		HeadCommit *fileLists  `json:"head_commit"`
		Repository struct {
			HTMLURL  string `json:"html_url"`
			CloneURL string `json:"clone_url"`
			SSHURL   string `json:"ssh_url"`
			URL      string `json:"url"`
		} `json:"repository"`
		TotalCommits *int `json:"total_commits"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("%s push: %w", provider, ErrMalformed)
	}
	urls := collectURLs(p.Repository.HTMLURL, p.Repository.CloneURL, p.Repository.SSHURL, p.Repository.URL)
	if len(urls) == 0 || p.Ref == "" {
		return nil, fmt.Errorf("%s push without repository or ref: %w", provider, ErrMalformed)
	}
	lists := p.Commits
	if len(lists) == 0 && p.HeadCommit != nil {
		lists = []fileLists{*p.HeadCommit}
	}
	paths := changedPaths(lists)
	complete := len(p.Commits) > 0 && (listCap == 0 || len(p.Commits) < listCap) && len(paths) < maxPaths
	if p.TotalCommits != nil && *p.TotalCommits != len(p.Commits) {
		complete = false
	}
	rev := p.After
	if p.Deleted || isZeroSHA(rev) {
		rev = ""
	}
	return []Hint{{Provider: provider, RepositoryURLs: urls, Ref: p.Ref, Revision: rev, ChangedPaths: paths, PathsComplete: complete}}, nil
}

func parseGitLab(body []byte) ([]Hint, error) {
	var p struct {
		ObjectKind        string      `json:"object_kind"`
		Ref               string      `json:"ref"`
		After             string      `json:"after"`
		Commits           []fileLists `json:"commits"`
		TotalCommitsCount int         `json:"total_commits_count"`
		Project           struct {
			WebURL        string `json:"web_url"`
			GitHTTPURL    string `json:"git_http_url"`
			GitSSHURL     string `json:"git_ssh_url"`
			HTTPURL       string `json:"http_url"`
			SSHURL        string `json:"ssh_url"`
			URL           string `json:"url"`
			Homepage      string `json:"homepage"`
			DefaultBranch string `json:"default_branch"`
		} `json:"project"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("gitlab push: %w", ErrMalformed)
	}
	if p.ObjectKind != "" && p.ObjectKind != "push" && p.ObjectKind != "tag_push" {
		return nil, ErrNotPush
	}
	pr := p.Project
	urls := collectURLs(pr.WebURL, pr.GitHTTPURL, pr.GitSSHURL, pr.HTTPURL, pr.SSHURL, pr.URL, pr.Homepage)
	if len(urls) == 0 || p.Ref == "" {
		return nil, fmt.Errorf("gitlab push without project or ref: %w", ErrMalformed)
	}
	paths := changedPaths(p.Commits)
	complete := len(p.Commits) > 0 && p.TotalCommitsCount == len(p.Commits) && len(paths) < maxPaths
	rev := p.After
	if isZeroSHA(rev) {
		rev = ""
	}
	return []Hint{{Provider: GitLab, RepositoryURLs: urls, Ref: p.Ref, Revision: rev, ChangedPaths: paths, PathsComplete: complete}}, nil
}

func parseBitbucket(body []byte) ([]Hint, error) {
	type refState struct {
		Type   string `json:"type"`
		Name   string `json:"name"`
		Target struct {
			Hash string `json:"hash"`
		} `json:"target"`
	}
	var p struct {
		Push struct {
			Changes []struct {
				New *refState `json:"new"`
				Old *refState `json:"old"`
			} `json:"changes"`
		} `json:"push"`
		Repository struct {
			FullName string `json:"full_name"`
			Links    struct {
				HTML struct {
					Href string `json:"href"`
				} `json:"html"`
			} `json:"links"`
		} `json:"repository"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("bitbucket push: %w", ErrMalformed)
	}
	urls := collectURLs(p.Repository.Links.HTML.Href)
	if p.Repository.FullName != "" && len(urls) == 0 {
		urls = collectURLs("https://bitbucket.org/" + p.Repository.FullName)
	}
	if len(urls) == 0 {
		return nil, fmt.Errorf("bitbucket push without repository: %w", ErrMalformed)
	}
	var hints []Hint
	for _, c := range p.Push.Changes {
		state := c.New
		if state == nil {
			state = c.Old // a deleted ref
		}
		if state == nil || state.Name == "" {
			continue
		}
		ref := "refs/heads/" + state.Name
		if state.Type == "tag" || state.Type == "annotated_tag" {
			ref = "refs/tags/" + state.Name
		}
		rev := ""
		if c.New != nil {
			rev = c.New.Target.Hash
		}
		hints = append(hints, Hint{Provider: Bitbucket, RepositoryURLs: urls, Ref: ref, Revision: rev})
	}
	if len(hints) == 0 {
		return nil, fmt.Errorf("bitbucket push without changes: %w", ErrMalformed)
	}
	return hints, nil
}

func parseBitbucketServer(body []byte) ([]Hint, error) {
	var p struct {
		Repository struct {
			Links struct {
				Clone []struct {
					Href string `json:"href"`
				} `json:"clone"`
				Self []struct {
					Href string `json:"href"`
				} `json:"self"`
			} `json:"links"`
		} `json:"repository"`
		Changes []struct {
			Ref struct {
				ID string `json:"id"`
			} `json:"ref"`
			ToHash string `json:"toHash"`
			Type   string `json:"type"`
		} `json:"changes"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("bitbucket-server push: %w", ErrMalformed)
	}
	var raw []string
	for _, l := range p.Repository.Links.Clone {
		raw = append(raw, l.Href)
	}
	for _, l := range p.Repository.Links.Self {
		raw = append(raw, l.Href)
	}
	urls := collectURLs(raw...)
	if len(urls) == 0 {
		return nil, fmt.Errorf("bitbucket-server push without repository: %w", ErrMalformed)
	}
	var hints []Hint
	for _, c := range p.Changes {
		if c.Ref.ID == "" {
			continue
		}
		rev := c.ToHash
		if c.Type == "DELETE" || isZeroSHA(rev) {
			rev = ""
		}
		hints = append(hints, Hint{Provider: BitbucketServer, RepositoryURLs: urls, Ref: c.Ref.ID, Revision: rev})
	}
	if len(hints) == 0 {
		return nil, fmt.Errorf("bitbucket-server push without changes: %w", ErrMalformed)
	}
	return hints, nil
}

// collectURLs keeps the non-empty, distinct URLs in order.
func collectURLs(in ...string) []string {
	var out []string
	seen := map[string]bool{}
	for _, u := range in {
		u = strings.TrimSpace(u)
		if u == "" || seen[u] || len(u) > 2048 {
			continue
		}
		seen[u] = true
		out = append(out, u)
	}
	return out
}

// changedPaths merges the file lists of commits into sorted clean paths.
func changedPaths(commits []fileLists) []string {
	set := map[string]bool{}
	for _, c := range commits {
		for _, list := range [][]string{c.Added, c.Modified, c.Removed} {
			for _, p := range list {
				if len(set) >= maxPaths {
					break
				}
				p = strings.TrimPrefix(p, "/")
				// "." is a valid, clean fs path but names no file.
				if p != "" && p != "." && fs.ValidPath(p) && path.Clean(p) == p {
					set[p] = true
				}
			}
		}
	}
	if len(set) == 0 {
		return nil
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func isZeroSHA(s string) bool {
	return s != "" && strings.Trim(s, "0") == ""
}
