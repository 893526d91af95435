package forgetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// GitHub serves the forge as GitHub's REST API v3 documents it (the
// endpoints Argo CD's github providers call): GET /orgs/{org}/repos,
// /repos/{o}/{r}/branches, /repos/{o}/{r}/branches/{b},
// /repos/{o}/{r}/contents/{path}?ref=, /repos/{o}/{r}/pulls?state=open;
// pages linked by Link headers (rel="next", rel="last"); the token as
// "Authorization: Bearer" (or "token"). It returns the base URL; GitHub
// Enterprise's form is base + "/api/v3/".
func (f *Forge) GitHub(t testing.TB) string {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v3/orgs/{org}/repos", func(w http.ResponseWriter, r *http.Request) {
		repos := f.reposOf(r.PathValue("org"))
		if len(repos) == 0 {
			notFound(w)
			return
		}
		items, p, more := page(f, r, repos, "page", "per_page")
		out := make([]map[string]any, 0, len(items))
		for _, rp := range items {
			out = append(out, map[string]any{"id": rp.ID, "name": rp.Name, "full_name": rp.Org + "/" + rp.Name,
				"owner": map[string]any{"login": rp.Org}, "default_branch": rp.DefaultBranch, "topics": nonNil(rp.Topics),
				"archived": rp.Archived, "clone_url": "https://github.test/" + rp.Org + "/" + rp.Name + ".git",
				"ssh_url": "git@github.test:" + rp.Org + "/" + rp.Name + ".git"})
		}
		githubLinks(w, r, p, more)
		writeJSON(w, out)
	})
	mux.HandleFunc("GET /api/v3/repos/{org}/{repo}/branches", func(w http.ResponseWriter, r *http.Request) {
		rp, ok := f.repo(r.PathValue("org"), r.PathValue("repo"))
		if !ok {
			notFound(w)
			return
		}
		items, p, more := page(f, r, sortedBranches(rp), "page", "per_page")
		out := make([]map[string]any, 0, len(items))
		for _, b := range items {
			out = append(out, map[string]any{"name": b, "commit": map[string]any{"sha": rp.Branches[b]}})
		}
		githubLinks(w, r, p, more)
		writeJSON(w, out)
	})
	mux.HandleFunc("GET /api/v3/repos/{org}/{repo}/branches/{branch}", func(w http.ResponseWriter, r *http.Request) {
		rp, ok := f.repo(r.PathValue("org"), r.PathValue("repo"))
		sha, has := rp.Branches[r.PathValue("branch")]
		if !ok || !has {
			notFound(w)
			return
		}
		writeJSON(w, map[string]any{"name": r.PathValue("branch"), "commit": map[string]any{"sha": sha}})
	})
	mux.HandleFunc("GET /api/v3/repos/{org}/{repo}/contents/{path...}", func(w http.ResponseWriter, r *http.Request) {
		rp, ok := f.repo(r.PathValue("org"), r.PathValue("repo"))
		_, branch := rp.Branches[r.URL.Query().Get("ref")]
		if !ok || !branch || !rp.hasFile(r.PathValue("path")) {
			notFound(w)
			return
		}
		writeJSON(w, map[string]any{"type": "file", "name": r.PathValue("path"), "path": r.PathValue("path")})
	})
	mux.HandleFunc("GET /api/v3/repos/{org}/{repo}/pulls", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := f.repo(r.PathValue("org"), r.PathValue("repo")); !ok {
			notFound(w)
			return
		}
		if s := r.URL.Query().Get("state"); s != "" && s != "open" {
			http.Error(w, "this forge serves open pull requests", http.StatusBadRequest)
			return
		}
		items, p, more := page(f, r, f.openPRs(r.PathValue("org"), r.PathValue("repo")), "page", "per_page")
		out := make([]map[string]any, 0, len(items))
		for _, pr := range items {
			labels := make([]map[string]any, 0, len(pr.Labels))
			for _, l := range pr.Labels {
				labels = append(labels, map[string]any{"name": l})
			}
			out = append(out, map[string]any{"number": pr.Number, "state": "open", "title": pr.Title,
				"head": map[string]any{"ref": pr.Branch, "sha": pr.SHA}, "base": map[string]any{"ref": pr.Target},
				"user": map[string]any{"login": pr.Author}, "labels": labels})
		}
		githubLinks(w, r, p, more)
		writeJSON(w, out)
	})
	// A GitHub App installation token: the App's JWT (RS256, checked for
	// its form only) buys the forge's token.
	mux.HandleFunc("POST /api/v3/app/installations/{id}/access_tokens", func(w http.ResponseWriter, r *http.Request) {
		jwt, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if strings.Count(jwt, ".") != 2 {
			http.Error(w, `{"message":"A JSON web token could not be decoded"}`, http.StatusUnauthorized)
			return
		}
		f.mu.Lock()
		f.appTokens++
		tok := f.Token
		f.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, map[string]any{"token": tok, "expires_at": "2099-01-01T00:00:00Z"})
	})
	srv := f.serve(t, func(r *http.Request, token string) bool {
		if strings.HasPrefix(r.URL.Path, "/api/v3/app/installations/") {
			return true // the JWT is the App's, checked by the handler
		}
		a := r.Header.Get("Authorization")
		return a == "Bearer "+token || a == "token "+token
	}, mux)
	return srv.URL
}

// githubLinks writes GitHub's Link header for page p.
func githubLinks(w http.ResponseWriter, r *http.Request, p int, more bool) {
	link := func(n int, rel string) string {
		u := *r.URL
		u.Scheme, u.Host = "http", r.Host
		q := u.Query()
		q.Set("page", fmt.Sprint(n))
		u.RawQuery = q.Encode()
		return fmt.Sprintf("<%s>; rel=%q", (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawQuery: u.RawQuery}).String(), rel)
	}
	var links []string
	if more {
		links = append(links, link(p+1, "next"))
	}
	if p > 1 {
		links = append(links, link(p-1, "prev"), link(1, "first"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func notFound(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte(`{"message":"Not Found"}`))
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
