package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/kubegitops/gitops/rbac"
	"github.com/kubegitops/gitops/source"
)

// The settings pages (issue 47): repositories (settings_repos.go),
// clusters (settings_clusters.go) and projects (settings_projects.go), as
// Argo CD's settings show them, each read and written as Argo CD's API
// server does: the repository, repo-creds and cluster Secrets and the
// AppProjects of the namespace the portal serves (--namespace), every
// request decided by argocd-rbac-cm ("repositories", "clusters",
// "projects" with get, create, update, delete) and every write audited.
// Over an --apps folder the pages show what the engine has, read only.

// settingsFolderNote is the one line an --apps folder portal shows on the
// settings pages, and the error of a write there.
const settingsFolderNote = "Read only: this portal serves an --apps folder; repositories, clusters and projects are " +
	"read from and written to the Secrets and AppProjects of a namespace (start the portal with --namespace)."

// settingsBodyMax bounds the JSON body of a settings write.
const settingsBodyMax = 64 << 10

// settingsRoutes adds the settings pages and their API to m.
func (s *server) settingsRoutes(m *http.ServeMux) {
	m.Handle("GET /settings", http.RedirectHandler("/settings/repositories", http.StatusSeeOther))
	m.Handle("GET /settings/repositories", s.authed(s.reposPage))
	m.Handle("GET /settings/clusters", s.authed(s.clustersPage))
	m.Handle("GET /settings/projects", s.authed(s.projectsPage))
	m.Handle("GET /api/v1/repositories", s.authed(s.apiRepos))
	m.Handle("POST /api/v1/repositories", s.authed(s.apiCreateRepo))
	m.Handle("POST /api/v1/repositories/{id}/update", s.authed(s.apiUpdateRepo))
	m.Handle("POST /api/v1/repositories/{id}/delete", s.authed(s.apiDeleteRepo))
	m.Handle("GET /api/v1/clusters", s.authed(s.apiClusters))
	m.Handle("POST /api/v1/clusters/{id}/update", s.authed(s.apiUpdateCluster))
	m.Handle("POST /api/v1/clusters/{id}/delete", s.authed(s.apiDeleteCluster))
	m.Handle("GET /api/v1/projects", s.authed(s.apiProjects))
	m.Handle("POST /api/v1/projects", s.authed(s.apiCreateProject))
	m.Handle("POST /api/v1/projects/{id}/update", s.authed(s.apiUpdateProject))
	m.Handle("POST /api/v1/projects/{id}/delete", s.authed(s.apiDeleteProject))
}

// settingsError is a settings request refused or failed: its HTTP status
// and a message naming the object (never a Secret value).
type settingsError struct {
	code int
	msg  string
}

// Error implements error.
func (e *settingsError) Error() string { return e.msg }

// badSetting is a 400 naming what is wrong.
func badSetting(format string, args ...any) error {
	return &settingsError{code: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

// settingsOp is one settings write, as the audit log records it.
type settingsOp struct {
	// Action is "<kind>.<verb>": repository.create, cluster.update, ...
	Action string
	// Resource and Object are the request in Argo CD's RBAC terms.
	Resource, Object string
	// Project is the project of the object (the project itself for
	// projects).
	Project string
	Details map[string]any
}

// settingsAllowed decides c's request in Argo CD's terms: nil, or a 403
// naming each subject checked and the policy line (or default) that
// refused it. raw is a URL of the object that may carry credentials: the
// message shows it redacted.
func (s *server) settingsAllowed(c caller, resource, action, object, raw string) error {
	err := s.opts.Authz.decide(c.identity, resource, action, object)
	if err == nil {
		return nil
	}
	msg := err.Error()
	if raw != "" {
		msg = strings.ReplaceAll(msg, raw, source.RedactURL(raw))
	}
	return &settingsError{code: http.StatusForbidden, msg: msg}
}

// refusal is why c may not do action on object, for the page ("" when it
// may).
func (s *server) refusal(c caller, resource, action, object, raw string) string {
	if err := s.settingsAllowed(c, resource, action, object, raw); err != nil {
		return err.Error()
	}
	return ""
}

// settingsWritable refuses a write when the portal serves no namespace.
func (s *server) settingsWritable() error {
	if s.ns == nil {
		return &settingsError{code: http.StatusConflict, msg: settingsFolderNote}
	}
	return nil
}

// readSettingsBody decodes a write's JSON body strictly into v: an
// unknown field or a value of the wrong type is a 400 naming it.
func readSettingsBody(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, settingsBodyMax))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badSetting("request body: %v", err)
	}
	return nil
}

// settingsWriteOf names the settings write r asks for (before its body
// is read: a refusal by the CSRF check is audited with it).
func settingsWriteOf(r *http.Request) (settingsOp, bool) {
	if r.Method != http.MethodPost {
		return settingsOp{}, false
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/api/v1/"), "/")
	kinds := map[string][2]string{"repositories": {"repository", rbac.ResourceRepositories},
		"clusters": {"cluster", rbac.ResourceClusters}, "projects": {"project", rbac.ResourceProjects}}
	k, ok := kinds[parts[0]]
	switch {
	case !ok:
		return settingsOp{}, false
	case len(parts) == 1:
		return settingsOp{Action: k[0] + ".create", Resource: k[1]}, true
	case len(parts) == 3:
		return settingsOp{Action: k[0] + "." + parts[2], Resource: k[1], Details: map[string]any{"id": parts[1]}}, true
	}
	return settingsOp{}, false
}

// finishSettingAudit writes op's audit record with its outcome.
func (s *server) finishSettingAudit(c caller, op settingsOp, outcome string) {
	s.audit.record(auditRecord{User: c.User, Groups: c.Groups, Via: c.Via, TokenID: c.TokenID, Action: op.Action,
		Resource: op.Resource, Object: source.RedactURL(op.Object), Project: op.Project, Details: op.Details, Outcome: outcome})
}

// finishSetting audits op with its outcome and answers: 200 with out, or
// the error's status (a refusal's outcome starts "refused: ").
func (s *server) finishSetting(w http.ResponseWriter, c caller, op settingsOp, out any, err error) {
	outcome := "done"
	code := http.StatusOK
	if err != nil {
		code = http.StatusInternalServerError
		var se *settingsError
		if errors.As(err, &se) {
			code = se.code
		}
		outcome = "error: " + err.Error()
		if code == http.StatusForbidden || code == http.StatusConflict {
			outcome = refusedPrefix + err.Error()
		}
	}
	s.finishSettingAudit(c, op, outcome)
	if err != nil {
		apiError(w, code, err.Error())
		return
	}
	writeJSON(w, code, out)
}

// settingsPageData is what the three settings pages share.
type settingsPageData struct {
	// Tab is repositories, clusters or projects.
	Tab string
	// Served is false over an --apps folder: Note says why the page is
	// read only.
	Served bool
	Note   string
	// Done is the outcome of the write that led here (?done=).
	Done string
	// Create is why c may not create (""), for the page's New form.
	CreateRefused string
	Body          any
}

// settingsPage renders one settings page.
func (s *server) settingsPage(w http.ResponseWriter, r *http.Request, c caller, tab, title string, body any, createRefused string, err error) {
	if err != nil {
		s.render(w, http.StatusInternalServerError, "error.html", s.page(c, title, err.Error()))
		return
	}
	d := settingsPageData{Tab: tab, Served: s.ns != nil, Done: r.URL.Query().Get("done"), CreateRefused: createRefused, Body: body}
	if s.ns == nil {
		d.Note = settingsFolderNote
	}
	s.render(w, http.StatusOK, tab+".html", s.page(c, title, d))
}

// settingsContext bounds a settings request's calls to the API server.
func settingsContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), nsWriteTimeout)
}

// cacheWaitMax bounds how long a write waits for the namespace's cache to
// show it.
const cacheWaitMax = 5 * time.Second

// waitCached polls get until the cache holds the object at resourceVersion
// rv (rv "": until it is gone), at most cacheWaitMax: the write is made
// either way, and the page read next shows it once the cache has it.
func (b *nsBackend) waitCached(ctx context.Context, get func() (rv string, exists bool, err error), rv string) error {
	ctx, cancel := context.WithTimeout(ctx, cacheWaitMax)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		cur, ok, err := get()
		if err != nil && ctx.Err() == nil {
			return err
		}
		if (rv == "" && !ok) || (rv != "" && ok && cur == rv) {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
