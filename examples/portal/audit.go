package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path"
	gosync "sync"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/project"
)

// auditRecord is one line of the audit log: who did what to which app,
// and how it ended. Requests carry no Secret values, so none are logged.
type auditRecord struct {
	Time    time.Time      `json:"time"`
	User    string         `json:"user"`
	Groups  []string       `json:"groups,omitempty"`
	Via     string         `json:"via"`
	TokenID string         `json:"tokenId,omitempty"`
	Action  string         `json:"action"`
	App     string         `json:"app,omitempty"`
	Project string         `json:"project"`
	Details map[string]any `json:"details,omitempty"`
	Outcome string         `json:"outcome"`

	// Resource and Object name what a settings write (settings.go) was
	// about, in Argo CD's RBAC terms; empty for an app's.
	Resource string `json:"resource,omitempty"`
	Object   string `json:"object,omitempty"`
}

// refusedPrefix starts the outcome of every refused attempt.
const refusedPrefix = "refused: "

// auditLog writes JSON lines, one record at a time.
type auditLog struct {
	mu gosync.Mutex
	w  io.Writer
}

func (l *auditLog) write(id identity, action string, a *gitops.Application, details map[string]any, outcome string) {
	l.record(auditRecord{User: id.User, Groups: id.Groups, Via: id.Via, TokenID: id.TokenID, Action: action,
		App: a.Name, Project: projectOf(a), Details: details, Outcome: outcome})
}

func (l *auditLog) record(rec auditRecord) {
	rec.Time = time.Now().UTC()
	b, err := json.Marshal(rec)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.w.Write(append(b, '\n'))
}

// refused audits a state-changing request refused before it ran (by the
// caller's role, the policy hiding the app, or a CSRF check): the action
// is the route's last segment (sync, rollback, terminate, action,
// refresh), the app the one named in the path, with its project when it
// exists.
func (s *server) refused(r *http.Request, id identity, why string) {
	name := r.PathValue("name")
	rec := auditRecord{User: id.User, Groups: id.Groups, Via: id.Via, TokenID: id.TokenID, Action: path.Base(r.URL.Path), App: name,
		Outcome: refusedPrefix + why}
	if a, ok := s.app(name); ok {
		rec.Project = projectOf(a)
	}
	s.audit.record(rec)
}

// denyChange answers a refused state-changing request and audits it.
func (s *server) denyChange(w http.ResponseWriter, r *http.Request, c caller, err error) {
	s.refused(r, c.identity, err.Error())
	deny(w, err)
}

// outcomeOf is the audited end of an operation: its phase, "refused: ..."
// when the engine refused it by a project or policy rule or a sync
// window, else "error: ...".
func outcomeOf(phase string, err error) string {
	if err == nil {
		return phase
	}
	var pe *project.PolicyError
	var we *engine.SyncWindowError
	if errors.As(err, &pe) || errors.As(err, &we) || errors.Is(err, project.ErrPolicy) {
		return refusedPrefix + err.Error()
	}
	return "error: " + err.Error()
}
