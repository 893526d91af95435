package main

import (
	"fmt"
	"net/http"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/rbac"
)

// maxBulk bounds the apps of one bulk sync.
const maxBulk = 500

// bulkSyncRequest is the list's "Sync selected": the apps by name, with
// the sync dialog's prune choice.
type bulkSyncRequest struct {
	Apps  []string `json:"apps"`
	Prune bool     `json:"prune"`
}

// bulkRefusal is one app of a bulk sync that did not start, and why.
type bulkRefusal struct {
	App   string `json:"app"`
	Error string `json:"error"`
}

// bulkAnswer says which apps a bulk operation started (a sync, a refresh
// queued, a deletion) and which were refused.
type bulkAnswer struct {
	Started []string      `json:"started"`
	Refused []bulkRefusal `json:"refused"`
}

// apiBulkSync syncs each named app the caller may sync (applications,
// sync on its project, checked by appNamed as for one app) and the engine
// would not refuse at once (launchSync), and reports every other by name;
// each refusal is audited like a refused single sync.
func (s *server) apiBulkSync(w http.ResponseWriter, r *http.Request, c caller) {
	var body bulkSyncRequest
	if !readBody(w, r, &body) {
		return
	}
	if len(body.Apps) == 0 || len(body.Apps) > maxBulk {
		apiError(w, http.StatusBadRequest, fmt.Sprintf("apps: name 1 to %d applications", maxBulk))
		return
	}
	out := bulkAnswer{Started: []string{}, Refused: []bulkRefusal{}}
	seen := map[string]bool{}
	for _, name := range body.Apps {
		if seen[name] {
			continue
		}
		seen[name] = true
		details := map[string]any{"prune": body.Prune, "bulk": true}
		a, _, err := s.appNamed(c, name, rbac.ResourceApplications, rbac.ActionSync)
		if err == nil {
			req := gitops.SyncRequest{Prune: body.Prune, Manual: true}
			err = s.launchSync(c, a, req, details)
		} else {
			rec := auditRecord{User: c.User, Groups: c.Groups, Via: c.Via, TokenID: c.TokenID, Action: "sync", App: name,
				Details: details, Outcome: refusedPrefix + err.Error()}
			if a, ok := s.app(name); ok {
				rec.Project = projectOf(a)
			}
			s.audit.record(rec)
		}
		if err != nil {
			out.Refused = append(out.Refused, bulkRefusal{App: name, Error: err.Error()})
			continue
		}
		out.Started = append(out.Started, name)
	}
	writeJSON(w, http.StatusAccepted, out)
}
