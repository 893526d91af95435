package main

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/rbac"
)

// appRow is one app of the list.
type appRow struct {
	Name      string            `json:"name"`
	Project   string            `json:"project"`
	Cluster   string            `json:"cluster"`
	Namespace string            `json:"namespace"`
	Sync      string            `json:"sync"`
	Health    string            `json:"health"`
	Revision  string            `json:"revision,omitempty"`
	LastSync  time.Time         `json:"lastSync,omitzero"`
	Labels    map[string]string `json:"labels,omitempty"`
	// key is the app's key, to read its last operation.
	key v1alpha1.AppKey
}

// listQuery is the list's filters and page, read from the URL.
type listQuery struct {
	Project, Cluster, Sync, Health, Label, Search string
	Page                                          int
}

func readListQuery(q url.Values) listQuery {
	page, _ := strconv.Atoi(q.Get("page"))
	if page < 1 {
		page = 1
	}
	return listQuery{Project: q.Get("project"), Cluster: q.Get("cluster"), Sync: q.Get("sync"),
		Health: q.Get("health"), Label: strings.TrimSpace(q.Get("label")), Search: strings.TrimSpace(q.Get("q")), Page: page}
}

// values writes the query back, for paging links.
func (q listQuery) values(page int) string {
	v := url.Values{}
	for k, s := range map[string]string{"project": q.Project, "cluster": q.Cluster, "sync": q.Sync, "health": q.Health, "label": q.Label, "q": q.Search} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	return v.Encode()
}

// appList is one page of the list.
type appList struct {
	Items []appRow `json:"items"`
	Total int      `json:"total"`
	Page  int      `json:"page"`
	Pages int      `json:"pages"`
	// Projects and Clusters are the filter choices the caller may see.
	Projects []string `json:"projects"`
	Clusters []string `json:"clusters"`
	// SyncCounts and HealthCounts are the tiles: how many apps of the
	// list have each sync and health status, counted with every filter but
	// the sync and health ones (a tile filters by its status).
	SyncCounts   map[string]int `json:"syncCounts"`
	HealthCounts map[string]int `json:"healthCounts"`
}

// rowOf is a's row of the list, with the engine's in-memory status.
func (s *server) rowOf(a *gitops.Application) appRow {
	row := appRow{key: v1alpha1.KeyOf(a), Name: a.Name, Project: projectOf(a), Cluster: s.clusterOf(a), Namespace: a.Spec.Destination.Namespace, Labels: a.Labels,
		Sync: string(appstatus.Unknown), Health: "Unknown"}
	if st, ok := s.appStatus(a); ok {
		row.Sync, row.Health, row.Revision = string(st.Sync), string(st.Health.Code), st.Revision
	}
	return row
}

// matchLabel reads "k=v" (or "k" for presence).
func matchLabel(labels map[string]string, sel string) bool {
	if sel == "" {
		return true
	}
	k, v, hasV := strings.Cut(sel, "=")
	got, ok := labels[strings.TrimSpace(k)]
	return ok && (!hasV || got == strings.TrimSpace(v))
}

// list filters the apps the caller may read and returns one page. It
// reads the engine's in-memory status of each app; the last sync time is
// read from the state store for the page's rows only.
func (s *server) list(ctx context.Context, c caller, q listQuery) appList {
	out := appList{Page: q.Page, SyncCounts: map[string]int{}, HealthCounts: map[string]int{}}
	projects, clusters := map[string]bool{}, map[string]bool{}
	search := strings.ToLower(q.Search)
	for _, name := range s.appNames() {
		a, ok := s.app(name)
		if !ok {
			continue
		}
		proj := projectOf(a)
		if !s.opts.Authz.allow(c.identity, rbac.ResourceApplications, rbac.ActionGet, appObject(a)) {
			continue
		}
		cl := s.clusterOf(a)
		projects[proj], clusters[cl] = true, true
		if (q.Project != "" && q.Project != proj) || (q.Cluster != "" && q.Cluster != cl) ||
			!matchLabel(a.Labels, q.Label) || (search != "" && !strings.Contains(strings.ToLower(name), search)) {
			continue
		}
		row := s.rowOf(a)
		out.SyncCounts[row.Sync]++
		out.HealthCounts[row.Health]++
		if (q.Sync != "" && q.Sync != row.Sync) || (q.Health != "" && q.Health != row.Health) {
			continue
		}
		out.Total++
		if out.Total > (q.Page-1)*s.opts.PageSize && out.Total <= q.Page*s.opts.PageSize {
			out.Items = append(out.Items, row)
		}
	}
	out.Pages = max(1, (out.Total+s.opts.PageSize-1)/s.opts.PageSize)
	for i := range out.Items {
		a, ok := s.app(out.Items[i].Name)
		if !ok {
			continue
		}
		if op, err := s.appLastOperation(ctx, a); err == nil && op != nil && !op.DryRun {
			out.Items[i].LastSync = op.FinishedAt
		}
	}
	for p := range projects {
		out.Projects = append(out.Projects, p)
	}
	for cl := range clusters {
		out.Clusters = append(out.Clusters, cl)
	}
	slices.Sort(out.Projects)
	slices.Sort(out.Clusters)
	if out.Items == nil {
		out.Items = []appRow{}
	}
	return out
}

func (s *server) apiList(w http.ResponseWriter, r *http.Request, c caller) {
	writeJSON(w, http.StatusOK, s.list(r.Context(), c, readListQuery(r.URL.Query())))
}
