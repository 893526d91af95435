package main

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/rbac"
)

// historyRow is one recorded sync.
type historyRow struct {
	ID         int64     `json:"id"`
	Revision   string    `json:"revision"`
	Short      string    `json:"short"`
	DeployedAt time.Time `json:"deployedAt"`
	// Commit is the author and message of the first source's commit.
	Commit *commitMeta `json:"commit,omitempty"`
}

// appView is everything the app page shows.
type appView struct {
	Name           string                `json:"name"`
	Project        string                `json:"project"`
	Cluster        string                `json:"cluster"`
	Namespace      string                `json:"namespace"`
	RepoURL        string                `json:"repoURL"`
	Path           string                `json:"path,omitempty"`
	TargetRevision string                `json:"targetRevision,omitempty"`
	Automated      bool                  `json:"automated"`
	Reconciled     bool                  `json:"reconciled"`
	Status         badges                `json:"status"`
	Conditions     []appstatus.Condition `json:"conditions"`
	Tree           appTree               `json:"tree"`
	History        []historyRow          `json:"history"`
	Operation      *operationView        `json:"operation,omitempty"`
	// Commit is the author and message of Status.Revision (first source).
	Commit *commitMeta `json:"commit,omitempty"`
	// CanWrite is Permissions.Sync (sync, rollback, terminate).
	CanWrite    bool     `json:"canWrite"`
	CanSecrets  bool     `json:"canSecrets"`
	Permissions appPerms `json:"permissions"`
	// SyncWindow is set when the project's sync windows block a manual
	// sync now (syncWindow).
	SyncWindow *windowView `json:"syncWindow,omitempty"`
	// Windows are the project's sync windows that apply to the app,
	// with what each does now (windowsOf); nil when none applies.
	Windows *appWindows `json:"windows,omitempty"`
}

func (s *server) appView(r *http.Request, a *gitops.Application, p appPerms) appView {
	v := appView{Name: a.Name, Project: projectOf(a), Cluster: s.clusterOf(a), Namespace: a.Spec.Destination.Namespace,
		CanWrite: p.Sync, CanSecrets: p.Secrets, Permissions: p, Conditions: []appstatus.Condition{}, History: []historyRow{},
		Status: badges{Sync: string(appstatus.Unknown), Health: "Unknown"}}
	if srcs := a.Spec.AllSources(); len(srcs) > 0 {
		v.RepoURL, v.Path, v.TargetRevision = srcs[0].RepoURL, srcs[0].Path, srcs[0].TargetRevision
	}
	if sp := a.Spec.SyncPolicy; sp != nil && sp.Automated != nil && (sp.Automated.Enabled == nil || *sp.Automated.Enabled) {
		v.Automated = true
	}
	st, ok := s.appStatus(a)
	v.Reconciled = ok
	if ok {
		v.Status = statusBadges(st)
		v.Conditions = append(v.Conditions, st.Conditions...)
	}
	now := time.Now()
	v.SyncWindow = s.syncWindow(a, now)
	v.Windows = s.windowsOf(a, now)
	v.Tree = s.tree(r.Context(), a, st)
	v.History = s.historyRows(r.Context(), a)
	v.Commit = s.firstCommit(r.Context(), a, v.Status.Revision)
	v.Operation = s.lastOperation(r.Context(), a)
	return v
}

// historyRows is app's history, newest first.
func (s *server) historyRows(ctx context.Context, a *gitops.Application) []historyRow {
	out := []historyRow{}
	h, err := s.appHistory(ctx, a)
	if err != nil {
		return out
	}
	for i := len(h) - 1; i >= 0; i-- {
		rev := strings.Join(h[i].Revisions, ",")
		out = append(out, historyRow{ID: h[i].ID, Revision: rev, Short: shortRev(rev), DeployedAt: h[i].DeployedAt,
			Commit: s.firstCommit(ctx, a, rev)})
	}
	return out
}

// lastOperation is app's last operation, or nil.
func (s *server) lastOperation(ctx context.Context, a *gitops.Application) *operationView {
	op, err := s.appLastOperation(ctx, a)
	if err != nil {
		return nil
	}
	return operationOf(op)
}

func (s *server) apiApp(w http.ResponseWriter, r *http.Request, c caller) {
	a, p, err := s.appFor(r, c, rbac.ResourceApplications, rbac.ActionGet)
	if err != nil {
		deny(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s.appView(r, a, p))
}

func (s *server) apiStream(w http.ResponseWriter, r *http.Request, c caller) {
	a, _, err := s.appFor(r, c, rbac.ResourceApplications, rbac.ActionGet)
	if err != nil {
		deny(w, err)
		return
	}
	first := badges{Sync: string(appstatus.Unknown), Health: "Unknown"}
	if st, ok := s.appStatus(a); ok {
		first = statusBadges(st)
	}
	s.opts.Hooks.broker.serveStream(w, r, a.Name, streamEvent{Name: "status", Data: first})
}

// pageData is what every page template gets.
type pageData struct {
	User, Role, CSRF string
	Title            string
	Body             any
}

func (s *server) page(c caller, title string, body any) pageData {
	return pageData{User: c.User, Role: s.opts.Authz.roleName(c.identity), CSRF: c.csrf, Title: title, Body: body}
}

// listPageData is the list page's body.
type listPageData struct {
	List      appList
	Query     listQuery
	PrevQuery string
	NextQuery string
	Syncs     []string
	Healths   []string
	// Tiles are the counts by sync and health status (tilesOf).
	Tiles []tile
}

func (s *server) listPage(w http.ResponseWriter, r *http.Request, c caller) {
	q := readListQuery(r.URL.Query())
	l := s.list(r.Context(), c, q)
	d := listPageData{List: l, Query: q, Syncs: []string{"Synced", "OutOfSync", "Unknown"},
		Healths: []string{"Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown"}}
	d.Tiles = tilesOf(l, q, d.Syncs, d.Healths)
	if q.Page > 1 {
		d.PrevQuery = "?" + q.values(q.Page-1)
	}
	if q.Page < l.Pages {
		d.NextQuery = "?" + q.values(q.Page+1)
	}
	s.render(w, http.StatusOK, "list.html", s.page(c, "Applications", d))
}

func (s *server) appPage(w http.ResponseWriter, r *http.Request, c caller) {
	a, p, err := s.appFor(r, c, rbac.ResourceApplications, rbac.ActionGet)
	if err != nil {
		var ae *accessError
		code := http.StatusInternalServerError
		if errorsAs(err, &ae) {
			code = ae.code
		}
		s.render(w, code, "error.html", s.page(c, "Not found", err.Error()))
		return
	}
	v := s.appView(r, a, p)
	s.render(w, http.StatusOK, "app.html", s.page(c, a.Name, v))
}
