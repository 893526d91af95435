package forgetest

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// BitbucketServer serves the forge as Bitbucket Server's REST API 1.0
// documents it: GET /rest/api/1.0/projects/{key}/repos,
// /repos/{slug}/branches, /branches/default, /browse/{path}?at=,
// /pull-requests?state=OPEN; pages by start and limit answered with
// size, limit, start, isLastPage and nextPageStart; the token as a
// Bearer token or the password of basic auth. Organisations are project
// keys. It returns the server's URL.
func (f *Forge) BitbucketServer(t testing.TB) string {
	mux := http.NewServeMux()
	bbsPage := func(w http.ResponseWriter, r *http.Request, values []map[string]any) {
		start, _ := strconv.Atoi(r.URL.Query().Get("start"))
		size := f.PageSize
		if n, err := strconv.Atoi(r.URL.Query().Get("limit")); err == nil && n > 0 && n < size {
			size = n
		}
		end := min(start+size, len(values))
		if start > len(values) {
			start = len(values)
		}
		out := map[string]any{"size": end - start, "limit": size, "start": start, "isLastPage": end >= len(values), "values": values[start:end]}
		if end < len(values) {
			out["nextPageStart"] = end
		}
		writeJSON(w, out)
	}
	mux.HandleFunc("GET /rest/api/1.0/projects/{key}/repos", func(w http.ResponseWriter, r *http.Request) {
		repos := f.reposOf(r.PathValue("key"))
		if len(repos) == 0 {
			notFound(w)
			return
		}
		var vals []map[string]any
		for _, rp := range repos {
			vals = append(vals, map[string]any{"id": rp.ID, "slug": strings.ToLower(rp.Name), "name": rp.Name, "project": map[string]any{"key": rp.Org},
				"links": map[string]any{"clone": []map[string]any{
					{"href": "ssh://git@bitbucket.test:7999/" + strings.ToLower(rp.Org) + "/" + strings.ToLower(rp.Name) + ".git", "name": "ssh"},
					{"href": "https://bitbucket.test/scm/" + strings.ToLower(rp.Org) + "/" + strings.ToLower(rp.Name) + ".git", "name": "http"}}}})
		}
		bbsPage(w, r, vals)
	})
	bbsBranch := func(name, sha string, isDefault bool) map[string]any {
		return map[string]any{"id": "refs/heads/" + name, "displayId": name, "type": "BRANCH", "latestCommit": sha, "isDefault": isDefault}
	}
	mux.HandleFunc("GET /rest/api/1.0/projects/{key}/repos/{slug}/branches/default", func(w http.ResponseWriter, r *http.Request) {
		rp, ok := f.repo(r.PathValue("key"), r.PathValue("slug"))
		sha, has := rp.Branches[rp.DefaultBranch]
		if !ok || !has {
			notFound(w)
			return
		}
		writeJSON(w, bbsBranch(rp.DefaultBranch, sha, true))
	})
	mux.HandleFunc("GET /rest/api/1.0/projects/{key}/repos/{slug}/branches", func(w http.ResponseWriter, r *http.Request) {
		rp, ok := f.repo(r.PathValue("key"), r.PathValue("slug"))
		if !ok {
			notFound(w)
			return
		}
		var vals []map[string]any
		for _, b := range sortedBranches(rp) {
			vals = append(vals, bbsBranch(b, rp.Branches[b], b == rp.DefaultBranch))
		}
		bbsPage(w, r, vals)
	})
	mux.HandleFunc("GET /rest/api/1.0/projects/{key}/repos/{slug}/browse/{path...}", func(w http.ResponseWriter, r *http.Request) {
		rp, ok := f.repo(r.PathValue("key"), r.PathValue("slug"))
		_, branch := rp.Branches[r.URL.Query().Get("at")]
		if !ok || !branch || !rp.hasFile(r.PathValue("path")) {
			notFound(w)
			return
		}
		typ := "DIRECTORY"
		if containsExact(rp.Files, r.PathValue("path")) {
			typ = "FILE"
		}
		writeJSON(w, map[string]any{"type": typ})
	})
	mux.HandleFunc("GET /rest/api/1.0/projects/{key}/repos/{slug}/pull-requests", func(w http.ResponseWriter, r *http.Request) {
		rp, ok := f.repo(r.PathValue("key"), r.PathValue("slug"))
		if !ok {
			notFound(w)
			return
		}
		var vals []map[string]any
		for _, pr := range f.openPRs(rp.Org, rp.Name) {
			vals = append(vals, map[string]any{"id": pr.Number, "title": pr.Title, "state": "OPEN",
				"fromRef": map[string]any{"id": "refs/heads/" + pr.Branch, "displayId": pr.Branch, "latestCommit": pr.SHA},
				"toRef":   map[string]any{"id": "refs/heads/" + pr.Target, "displayId": pr.Target},
				"author":  map[string]any{"user": map[string]any{"name": pr.Author}}})
		}
		bbsPage(w, r, vals)
	})
	srv := f.serve(t, func(r *http.Request, token string) bool {
		if r.Header.Get("Authorization") == "Bearer "+token {
			return true
		}
		_, pw, ok := r.BasicAuth()
		return ok && pw == token
	}, mux)
	return srv.URL
}

// BitbucketCloud serves the forge as Bitbucket Cloud's REST API 2.0
// documents it: GET /2.0/repositories/{workspace},
// /repositories/{ws}/{slug}/refs/branches, /refs/branches/{name},
// /src/{branch}/{path}?format=meta, /pullrequests?state=OPEN; pages
// linked by the answer's next URL; the token as the app password of basic
// auth or a Bearer token. It returns the API's URL (…/2.0).
func (f *Forge) BitbucketCloud(t testing.TB) string {
	mux := http.NewServeMux()
	var base string
	cloudPage := func(w http.ResponseWriter, r *http.Request, values []map[string]any) {
		items, p, more := page(f, r, values, "page", "pagelen")
		out := map[string]any{"pagelen": f.PageSize, "page": p, "size": len(values), "values": items}
		if more {
			q := r.URL.Query()
			q.Set("page", strconv.Itoa(p+1))
			out["next"] = base + strings.TrimPrefix(r.URL.Path, "/2.0") + "?" + q.Encode()
		}
		writeJSON(w, out)
	}
	mux.HandleFunc("GET /2.0/repositories/{ws}", func(w http.ResponseWriter, r *http.Request) {
		repos := f.reposOf(r.PathValue("ws"))
		if len(repos) == 0 {
			notFound(w)
			return
		}
		var vals []map[string]any
		for _, rp := range repos {
			slug := strings.ToLower(rp.Name)
			vals = append(vals, map[string]any{"uuid": fmt.Sprintf("{%08d-0000-0000-0000-000000000000}", rp.ID), "name": rp.Name, "slug": slug,
				"full_name": rp.Org + "/" + slug, "mainbranch": map[string]any{"name": rp.DefaultBranch, "type": "branch"},
				"links": map[string]any{"clone": []map[string]any{
					{"href": "https://bitbucket.org/" + rp.Org + "/" + slug + ".git", "name": "https"},
					{"href": "git@bitbucket.org:" + rp.Org + "/" + slug + ".git", "name": "ssh"}}}})
		}
		cloudPage(w, r, vals)
	})
	mux.HandleFunc("GET /2.0/repositories/{ws}/{slug}/refs/branches", func(w http.ResponseWriter, r *http.Request) {
		rp, ok := f.repo(r.PathValue("ws"), r.PathValue("slug"))
		if !ok {
			notFound(w)
			return
		}
		var vals []map[string]any
		for _, b := range sortedBranches(rp) {
			vals = append(vals, map[string]any{"name": b, "type": "branch", "target": map[string]any{"hash": rp.Branches[b]}})
		}
		cloudPage(w, r, vals)
	})
	mux.HandleFunc("GET /2.0/repositories/{ws}/{slug}/refs/branches/{name}", func(w http.ResponseWriter, r *http.Request) {
		rp, ok := f.repo(r.PathValue("ws"), r.PathValue("slug"))
		sha, has := rp.Branches[r.PathValue("name")]
		if !ok || !has {
			notFound(w)
			return
		}
		writeJSON(w, map[string]any{"name": r.PathValue("name"), "type": "branch", "target": map[string]any{"hash": sha}})
	})
	mux.HandleFunc("GET /2.0/repositories/{ws}/{slug}/src/{branch}/{path...}", func(w http.ResponseWriter, r *http.Request) {
		rp, ok := f.repo(r.PathValue("ws"), r.PathValue("slug"))
		_, branch := rp.Branches[r.PathValue("branch")]
		if !ok || !branch || !rp.hasFile(r.PathValue("path")) {
			notFound(w)
			return
		}
		writeJSON(w, map[string]any{"path": r.PathValue("path"), "type": "commit_file"})
	})
	mux.HandleFunc("GET /2.0/repositories/{ws}/{slug}/pullrequests", func(w http.ResponseWriter, r *http.Request) {
		rp, ok := f.repo(r.PathValue("ws"), r.PathValue("slug"))
		if !ok {
			notFound(w)
			return
		}
		var vals []map[string]any
		for _, pr := range f.openPRs(rp.Org, rp.Name) {
			sha := pr.SHA
			if len(sha) > 12 {
				sha = sha[:12] // Bitbucket Cloud reports short hashes
			}
			vals = append(vals, map[string]any{"id": pr.Number, "title": pr.Title, "state": "OPEN",
				"source":      map[string]any{"branch": map[string]any{"name": pr.Branch}, "commit": map[string]any{"hash": sha}},
				"destination": map[string]any{"branch": map[string]any{"name": pr.Target}},
				"author":      map[string]any{"nickname": pr.Author, "display_name": pr.Author}})
		}
		cloudPage(w, r, vals)
	})
	srv := f.serve(t, func(r *http.Request, token string) bool {
		if r.Header.Get("Authorization") == "Bearer "+token {
			return true
		}
		_, pw, ok := r.BasicAuth()
		return ok && pw == token
	}, mux)
	base = srv.URL + "/2.0"
	return base
}

// AzureDevOps serves the forge as Azure DevOps' Git REST API documents
// it: GET /{org}/{project}/_apis/git/repositories,
// /repositories/{repo}/stats/branches[?name=], /repositories/{id}/items
// ?path=&versionDescriptor.version=, /repositories/{repo}/pullrequests
// ?searchCriteria.status=active&$top=&$skip=; every call with
// api-version; the token as the password of basic auth (":" + PAT).
// Organisations are "org/project". It returns the server's URL.
func (f *Forge) AzureDevOps(t testing.TB) string {
	mux := http.NewServeMux()
	repoOf := func(r *http.Request) (Repo, bool) {
		org := r.PathValue("org") + "/" + r.PathValue("project")
		id := r.PathValue("repo")
		for _, rp := range f.reposOf(org) {
			if strings.EqualFold(rp.Name, id) || fmt.Sprint(rp.ID) == id {
				return rp, true
			}
		}
		return Repo{}, false
	}
	azureNotFound := func(w http.ResponseWriter, typeKey string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"message":"not found","typeKey":%q}`, typeKey)
	}
	mux.HandleFunc("GET /{org}/{project}/_apis/git/repositories", func(w http.ResponseWriter, r *http.Request) {
		repos := f.reposOf(r.PathValue("org") + "/" + r.PathValue("project"))
		var vals []map[string]any
		for _, rp := range repos {
			vals = append(vals, map[string]any{"id": fmt.Sprint(rp.ID), "name": rp.Name, "defaultBranch": "refs/heads/" + rp.DefaultBranch,
				"remoteUrl": "https://dev.azure.test/" + rp.Org + "/_git/" + rp.Name, "sshUrl": "git@ssh.dev.azure.test:v3/" + rp.Org + "/" + rp.Name})
		}
		writeJSON(w, map[string]any{"count": len(vals), "value": vals})
	})
	mux.HandleFunc("GET /{org}/{project}/_apis/git/repositories/{repo}/stats/branches", func(w http.ResponseWriter, r *http.Request) {
		rp, ok := repoOf(r)
		if !ok {
			azureNotFound(w, "GitRepositoryNotFoundException")
			return
		}
		stat := func(b string) map[string]any {
			return map[string]any{"name": b, "commit": map[string]any{"commitId": rp.Branches[b]}, "isBaseVersion": b == rp.DefaultBranch}
		}
		if name := r.URL.Query().Get("name"); name != "" {
			if _, has := rp.Branches[name]; !has {
				azureNotFound(w, "GitBranchNotFoundException")
				return
			}
			writeJSON(w, stat(name))
			return
		}
		var vals []map[string]any
		for _, b := range sortedBranches(rp) {
			vals = append(vals, stat(b))
		}
		writeJSON(w, map[string]any{"count": len(vals), "value": vals})
	})
	mux.HandleFunc("GET /{org}/{project}/_apis/git/repositories/{repo}/items", func(w http.ResponseWriter, r *http.Request) {
		rp, ok := repoOf(r)
		_, branch := rp.Branches[r.URL.Query().Get("versionDescriptor.version")]
		if !ok || !branch || !rp.hasFile(r.URL.Query().Get("path")) {
			azureNotFound(w, "GitItemNotFoundException")
			return
		}
		writeJSON(w, map[string]any{"path": "/" + strings.Trim(r.URL.Query().Get("path"), "/"), "gitObjectType": "blob"})
	})
	mux.HandleFunc("GET /{org}/{project}/_apis/git/repositories/{repo}/pullrequests", func(w http.ResponseWriter, r *http.Request) {
		rp, ok := repoOf(r)
		if !ok {
			azureNotFound(w, "GitRepositoryNotFoundException")
			return
		}
		if s := r.URL.Query().Get("searchCriteria.status"); s != "active" {
			http.Error(w, "this forge serves active pull requests", http.StatusBadRequest)
			return
		}
		prs := f.openPRs(rp.Org, rp.Name)
		skip, _ := strconv.Atoi(r.URL.Query().Get("$skip"))
		top, err := strconv.Atoi(r.URL.Query().Get("$top"))
		if err != nil || top <= 0 {
			top = 101
		}
		skip = min(skip, len(prs))
		end := min(skip+top, len(prs))
		var vals []map[string]any
		for _, pr := range prs[skip:end] {
			labels := []map[string]any{}
			for _, l := range pr.Labels {
				labels = append(labels, map[string]any{"name": l, "active": true})
			}
			vals = append(vals, map[string]any{"pullRequestId": pr.Number, "title": pr.Title, "status": "active",
				"sourceRefName": "refs/heads/" + pr.Branch, "targetRefName": "refs/heads/" + pr.Target,
				"lastMergeSourceCommit": map[string]any{"commitId": pr.SHA},
				"createdBy":             map[string]any{"uniqueName": pr.Author + "@example.com", "displayName": pr.Author}, "labels": labels})
		}
		writeJSON(w, map[string]any{"count": len(vals), "value": vals})
	})
	srv := f.serve(t, func(r *http.Request, token string) bool {
		if r.URL.Query().Get("api-version") == "" {
			return false
		}
		a, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Basic ")
		if !ok {
			return false
		}
		b, _ := base64.StdEncoding.DecodeString(a)
		_, pw, _ := strings.Cut(string(b), ":")
		return pw == token
	}, mux)
	return srv.URL
}
