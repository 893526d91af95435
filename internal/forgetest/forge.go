package forgetest

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Repo is one repository of the forge.
type Repo struct {
	Org, Name     string
	ID            int
	DefaultBranch string
	// Branches are branch -> head SHA; the default branch must be one.
	Branches map[string]string
	// Topics are the repository's topics (GitHub, Gitea), its labels.
	Topics   []string
	Archived bool
	// Files are paths (files and directories) present on every branch.
	Files []string
}

// PR is one pull request.
type PR struct {
	Org, Repo     string
	Number        int
	Title         string
	Branch        string
	Target        string
	SHA           string
	Author        string
	Labels        []string
	Closed        bool
	SourceProject string
}

// Limit is an answer the forge gives instead of serving a request.
type Limit struct {
	Status  int
	Headers map[string]string
}

// Forge is the state every server of this package serves, in its own
// forge's API shape. It is safe for concurrent use: a test changes it
// (a pull request closed) while a controller reads it.
type Forge struct {
	mu sync.Mutex
	// Token is the token every request must carry (as its forge carries
	// it); "" accepts anonymous requests.
	Token string
	// PageSize caps every page the forge answers, so that three
	// repositories take two pages. Default 2.
	PageSize  int
	repos     []*Repo
	prs       []*PR
	limits    []Limit
	requests  []string
	appTokens int
}

// AppTokens is how many GitHub App installation tokens were minted.
func (f *Forge) AppTokens() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.appTokens
}

// New returns an empty forge.
func New() *Forge { return &Forge{PageSize: 2} }

// AddRepo adds a repository.
func (f *Forge) AddRepo(r Repo) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.ID == 0 {
		r.ID = 1000 + len(f.repos)
	}
	f.repos = append(f.repos, &r)
}

// OpenPR opens a pull request.
func (f *Forge) OpenPR(p PR) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.prs = append(f.prs, &p)
}

// ClosePR closes pull request number of org/repo.
func (f *Forge) ClosePR(org, repo string, number int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.prs {
		if p.Org == org && p.Repo == repo && p.Number == number {
			p.Closed = true
		}
	}
}

// LimitNext makes the next requests answer l, one each, in order.
func (f *Forge) LimitNext(l ...Limit) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.limits = append(f.limits, l...)
}

// Requests returns the paths (with queries) served so far.
func (f *Forge) Requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

// reposOf returns copies of org's repositories.
func (f *Forge) reposOf(org string) []Repo {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Repo
	for _, r := range f.repos {
		if strings.EqualFold(r.Org, org) {
			out = append(out, *r)
		}
	}
	return out
}

func (f *Forge) repo(org, name string) (Repo, bool) {
	for _, r := range f.reposOf(org) {
		if strings.EqualFold(r.Name, name) {
			return r, true
		}
	}
	return Repo{}, false
}

// openPRs returns copies of the open pull requests of org/repo.
func (f *Forge) openPRs(org, repo string) []PR {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []PR
	for _, p := range f.prs {
		if strings.EqualFold(p.Org, org) && strings.EqualFold(p.Repo, repo) && !p.Closed {
			out = append(out, *p)
		}
	}
	return out
}

// serve wraps a forge's handler: it records the request, answers a
// pending Limit, and checks the token with authorized.
func (f *Forge) serve(t testing.TB, authorized func(r *http.Request, token string) bool, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests = append(f.requests, r.URL.RequestURI())
		var lim *Limit
		if len(f.limits) > 0 {
			l := f.limits[0]
			f.limits = f.limits[1:]
			lim = &l
		}
		token := f.Token
		f.mu.Unlock()
		if lim != nil {
			for k, v := range lim.Headers {
				w.Header().Set(k, v)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(lim.Status)
			_, _ = w.Write([]byte(`{"message":"API rate limit exceeded"}`))
			return
		}
		if token != "" && !authorized(r, token) {
			http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// page cuts items to the page asked by the query's page (1-based) and
// per-page key, capped at PageSize; it returns the page and whether
// another follows.
func page[T any](f *Forge, r *http.Request, items []T, pageKey, sizeKey string) ([]T, int, bool) {
	size := f.PageSize
	if n, err := strconv.Atoi(r.URL.Query().Get(sizeKey)); err == nil && n > 0 && n < size {
		size = n
	}
	p := 1
	if n, err := strconv.Atoi(r.URL.Query().Get(pageKey)); err == nil && n > 0 {
		p = n
	}
	start := (p - 1) * size
	if start >= len(items) {
		return nil, p, false
	}
	end := min(start+size, len(items))
	return items[start:end], p, end < len(items)
}

// hasFile reports whether a repository has path (a file, or a directory
// holding one).
func (r Repo) hasFile(path string) bool {
	path = strings.Trim(path, "/")
	for _, f := range r.Files {
		if f == path || strings.HasPrefix(f, path+"/") {
			return true
		}
	}
	return false
}

func sortedBranches(r Repo) []string {
	out := make([]string, 0, len(r.Branches))
	for b := range r.Branches {
		out = append(out, b)
	}
	slices.Sort(out)
	return out
}
