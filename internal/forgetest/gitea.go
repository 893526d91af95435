package forgetest

import (
	"net/http"
	"strings"
	"testing"
)

// Gitea serves the forge as Gitea's API v1 documents it (the endpoints
// Argo CD's gitea providers call): GET /api/v1/version,
// /orgs/{org}/repos, /repos/{o}/{r}/labels, /branches, /branches/{b},
// /contents/{path}?ref=, /pulls?state=open; pages by page and limit,
// linked by Link headers; the token as "Authorization: token". It returns
// the server's URL.
func (f *Forge) Gitea(t testing.TB) string {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/version", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"version": "1.26.0"})
	})
	mux.HandleFunc("GET /api/v1/orgs/{org}/repos", func(w http.ResponseWriter, r *http.Request) {
		repos := f.reposOf(r.PathValue("org"))
		if len(repos) == 0 {
			notFound(w)
			return
		}
		items, p, more := page(f, r, repos, "page", "limit")
		out := make([]map[string]any, 0, len(items))
		for _, rp := range items {
			out = append(out, map[string]any{"id": rp.ID, "name": rp.Name, "full_name": rp.Org + "/" + rp.Name,
				"owner": map[string]any{"login": rp.Org, "username": rp.Org}, "default_branch": rp.DefaultBranch, "archived": rp.Archived,
				"html_url": "https://gitea.test/" + rp.Org + "/" + rp.Name, "clone_url": "https://gitea.test/" + rp.Org + "/" + rp.Name + ".git",
				"ssh_url": "git@gitea.test:" + rp.Org + "/" + rp.Name + ".git"})
		}
		githubLinks(w, r, p, more)
		writeJSON(w, out)
	})
	mux.HandleFunc("GET /api/v1/repos/{org}/{repo}/labels", func(w http.ResponseWriter, r *http.Request) {
		rp, ok := f.repo(r.PathValue("org"), r.PathValue("repo"))
		if !ok {
			notFound(w)
			return
		}
		out := []map[string]any{}
		for i, l := range rp.Topics {
			out = append(out, map[string]any{"id": i + 1, "name": l, "color": "00aabb"})
		}
		writeJSON(w, out)
	})
	mux.HandleFunc("GET /api/v1/repos/{org}/{repo}/branches", func(w http.ResponseWriter, r *http.Request) {
		rp, ok := f.repo(r.PathValue("org"), r.PathValue("repo"))
		if !ok {
			notFound(w)
			return
		}
		items, p, more := page(f, r, sortedBranches(rp), "page", "limit")
		out := make([]map[string]any, 0, len(items))
		for _, b := range items {
			out = append(out, map[string]any{"name": b, "commit": map[string]any{"id": rp.Branches[b]}})
		}
		githubLinks(w, r, p, more)
		writeJSON(w, out)
	})
	mux.HandleFunc("GET /api/v1/repos/{org}/{repo}/branches/{branch}", func(w http.ResponseWriter, r *http.Request) {
		rp, ok := f.repo(r.PathValue("org"), r.PathValue("repo"))
		sha, has := rp.Branches[r.PathValue("branch")]
		if !ok || !has {
			notFound(w)
			return
		}
		writeJSON(w, map[string]any{"name": r.PathValue("branch"), "commit": map[string]any{"id": sha}})
	})
	mux.HandleFunc("GET /api/v1/repos/{org}/{repo}/contents/{path...}", func(w http.ResponseWriter, r *http.Request) {
		rp, ok := f.repo(r.PathValue("org"), r.PathValue("repo"))
		_, branch := rp.Branches[r.URL.Query().Get("ref")]
		p := r.PathValue("path")
		if !ok || !branch || !rp.hasFile(p) {
			notFound(w)
			return
		}
		if rp.hasFile(p) && !containsExact(rp.Files, p) { // a directory: its entries
			writeJSON(w, []map[string]any{{"name": "entry", "path": p + "/entry", "type": "file"}})
			return
		}
		writeJSON(w, map[string]any{"name": p, "path": p, "type": "file"})
	})
	mux.HandleFunc("GET /api/v1/repos/{org}/{repo}/pulls", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := f.repo(r.PathValue("org"), r.PathValue("repo")); !ok {
			notFound(w)
			return
		}
		items, p, more := page(f, r, f.openPRs(r.PathValue("org"), r.PathValue("repo")), "page", "limit")
		out := make([]map[string]any, 0, len(items))
		for _, pr := range items {
			labels := make([]map[string]any, 0, len(pr.Labels))
			for _, l := range pr.Labels {
				labels = append(labels, map[string]any{"name": l})
			}
			out = append(out, map[string]any{"number": pr.Number, "state": "open", "title": pr.Title,
				"head": map[string]any{"ref": pr.Branch, "sha": pr.SHA}, "base": map[string]any{"ref": pr.Target},
				"user": map[string]any{"login": pr.Author, "username": pr.Author}, "labels": labels})
		}
		githubLinks(w, r, p, more)
		writeJSON(w, out)
	})
	srv := f.serve(t, func(r *http.Request, token string) bool {
		return r.Header.Get("Authorization") == "token "+token
	}, mux)
	return srv.URL
}

func containsExact(files []string, p string) bool {
	p = strings.Trim(p, "/")
	for _, f := range files {
		if f == p {
			return true
		}
	}
	return false
}
