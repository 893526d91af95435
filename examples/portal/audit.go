package main

import (
	"encoding/json"
	"io"
	gosync "sync"
	"time"

	"github.com/kubegitops/gitops"
)

// auditRecord is one line of the audit log: who did what to which app,
// and how it ended. Requests carry no Secret values, so none are logged.
type auditRecord struct {
	Time    time.Time      `json:"time"`
	User    string         `json:"user"`
	Groups  []string       `json:"groups,omitempty"`
	Via     string         `json:"via"`
	Action  string         `json:"action"`
	App     string         `json:"app"`
	Project string         `json:"project"`
	Details map[string]any `json:"details,omitempty"`
	Outcome string         `json:"outcome"`
}

// auditLog writes JSON lines, one record at a time.
type auditLog struct {
	mu gosync.Mutex
	w  io.Writer
}

func (l *auditLog) write(id identity, action string, a *gitops.Application, details map[string]any, outcome string) {
	rec := auditRecord{Time: time.Now().UTC(), User: id.User, Groups: id.Groups, Via: id.Via, Action: action,
		App: a.Name, Project: projectOf(a), Details: details, Outcome: outcome}
	b, err := json.Marshal(rec)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.w.Write(append(b, '\n'))
}
