package forgetest

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// GitLab serves the forge as GitLab's REST API v4 documents it (the
// endpoints Argo CD's gitlab providers call): GET
// /api/v4/groups/{group}/projects, /projects/{id}/repository/branches,
// /branches/{b}, /repository/files/{path}?ref=, /repository/tree?path=&ref=,
// /projects/{id}/merge_requests?state=&labels=; offset pages by page and
// per_page with X-Page, X-Next-Page, X-Per-Page, X-Total and
// X-Total-Pages headers; the token as PRIVATE-TOKEN (or Bearer). A
// project's id is its number or its full path ("myorg/svc-a"). It returns
// the server's URL.
func (f *Forge) GitLab(t testing.TB) string {
	mux := http.NewServeMux()
	project := func(id string) (Repo, bool) {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, r := range f.repos {
			if strconv.Itoa(r.ID) == id || strings.EqualFold(r.Org+"/"+r.Name, id) {
				return *r, true
			}
		}
		return Repo{}, false
	}
	mux.HandleFunc("GET /api/v4/groups/{group}/projects", func(w http.ResponseWriter, r *http.Request) {
		repos := f.reposOf(r.PathValue("group"))
		if len(repos) == 0 {
			notFound(w)
			return
		}
		if r.URL.Query().Get("archived") == "false" {
			repos = slices.DeleteFunc(repos, func(rp Repo) bool { return rp.Archived })
		}
		items, p, more := page(f, r, repos, "page", "per_page")
		out := make([]map[string]any, 0, len(items))
		for _, rp := range items {
			out = append(out, map[string]any{"id": rp.ID, "name": rp.Name, "path": rp.Name, "path_with_namespace": rp.Org + "/" + rp.Name,
				"namespace": map[string]any{"full_path": rp.Org, "path": rp.Org}, "default_branch": rp.DefaultBranch,
				"topics": nonNil(rp.Topics), "archived": rp.Archived,
				"http_url_to_repo": "https://gitlab.test/" + rp.Org + "/" + rp.Name + ".git",
				"ssh_url_to_repo":  "git@gitlab.test:" + rp.Org + "/" + rp.Name + ".git"})
		}
		gitlabPages(w, p, more, len(repos), f.PageSize)
		writeJSON(w, out)
	})
	mux.HandleFunc("GET /api/v4/projects/{id}/repository/branches", func(w http.ResponseWriter, r *http.Request) {
		rp, ok := project(r.PathValue("id"))
		if !ok {
			notFound(w)
			return
		}
		all := sortedBranches(rp)
		items, p, more := page(f, r, all, "page", "per_page")
		out := make([]map[string]any, 0, len(items))
		for _, b := range items {
			out = append(out, map[string]any{"name": b, "commit": map[string]any{"id": rp.Branches[b]}, "default": b == rp.DefaultBranch})
		}
		gitlabPages(w, p, more, len(all), f.PageSize)
		writeJSON(w, out)
	})
	mux.HandleFunc("GET /api/v4/projects/{id}/repository/branches/{branch}", func(w http.ResponseWriter, r *http.Request) {
		rp, ok := project(r.PathValue("id"))
		sha, has := rp.Branches[r.PathValue("branch")]
		if !ok || !has {
			notFound(w)
			return
		}
		writeJSON(w, map[string]any{"name": r.PathValue("branch"), "commit": map[string]any{"id": sha}})
	})
	mux.HandleFunc("GET /api/v4/projects/{id}/repository/files/{path}", func(w http.ResponseWriter, r *http.Request) {
		rp, ok := project(r.PathValue("id"))
		_, branch := rp.Branches[r.URL.Query().Get("ref")]
		if !ok || !branch || !containsExact(rp.Files, r.PathValue("path")) {
			notFound(w)
			return
		}
		writeJSON(w, map[string]any{"file_name": r.PathValue("path"), "file_path": r.PathValue("path"), "ref": r.URL.Query().Get("ref")})
	})
	mux.HandleFunc("GET /api/v4/projects/{id}/repository/tree", func(w http.ResponseWriter, r *http.Request) {
		rp, ok := project(r.PathValue("id"))
		_, branch := rp.Branches[r.URL.Query().Get("ref")]
		dir := strings.Trim(r.URL.Query().Get("path"), "/")
		if !ok || !branch || !rp.hasFile(dir) {
			notFound(w)
			return
		}
		writeJSON(w, []map[string]any{{"name": "entry", "path": dir + "/entry", "type": "blob"}})
	})
	mux.HandleFunc("GET /api/v4/projects/{id}/merge_requests", func(w http.ResponseWriter, r *http.Request) {
		rp, ok := project(r.PathValue("id"))
		if !ok {
			notFound(w)
			return
		}
		f.mu.Lock()
		var mrs []PR
		for _, p := range f.prs {
			if strings.EqualFold(p.Org, rp.Org) && strings.EqualFold(p.Repo, rp.Name) {
				mrs = append(mrs, *p)
			}
		}
		f.mu.Unlock()
		state := r.URL.Query().Get("state")
		var want []string
		if l := r.URL.Query().Get("labels"); l != "" {
			want = strings.Split(l, ",")
		}
		mrs = slices.DeleteFunc(mrs, func(p PR) bool {
			st := "opened"
			if p.Closed {
				st = "closed"
			}
			for _, l := range want {
				if !slices.Contains(p.Labels, l) {
					return true
				}
			}
			return state != "" && state != "all" && state != st
		})
		items, p, more := page(f, r, mrs, "page", "per_page")
		out := make([]map[string]any, 0, len(items))
		for _, mr := range items {
			st := "opened"
			if mr.Closed {
				st = "closed"
			}
			out = append(out, map[string]any{"iid": mr.Number, "id": 5000 + mr.Number, "state": st, "title": mr.Title,
				"source_branch": mr.Branch, "target_branch": mr.Target, "sha": mr.SHA, "labels": nonNil(mr.Labels),
				"author": map[string]any{"username": mr.Author}})
		}
		gitlabPages(w, p, more, len(mrs), f.PageSize)
		writeJSON(w, out)
	})
	srv := f.serve(t, func(r *http.Request, token string) bool {
		return r.Header.Get("PRIVATE-TOKEN") == token || r.Header.Get("Authorization") == "Bearer "+token
	}, mux)
	return srv.URL
}

// gitlabPages writes GitLab's offset-pagination headers.
func gitlabPages(w http.ResponseWriter, p int, more bool, total, size int) {
	h := w.Header()
	h.Set("X-Page", strconv.Itoa(p))
	h.Set("X-Per-Page", strconv.Itoa(size))
	h.Set("X-Total", strconv.Itoa(total))
	h.Set("X-Total-Pages", strconv.Itoa(max(1, (total+size-1)/size)))
	if more {
		h.Set("X-Next-Page", strconv.Itoa(p+1))
	} else {
		h.Set("X-Next-Page", "")
	}
	if p > 1 {
		h.Set("X-Prev-Page", strconv.Itoa(p-1))
	}
}
