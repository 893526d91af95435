package main

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/rbac"
)

// bulkRefreshRequest is the list's "Refresh selected": the apps by name,
// and Argo CD's refresh type (hard also forgets resolved revisions).
type bulkRefreshRequest struct {
	Apps []string `json:"apps"`
	Hard bool     `json:"hard"`
}

// bulkDeleteRequest is the list's "Delete selected": the apps by name,
// the cascade of the app's delete dialog, and their number typed again.
type bulkDeleteRequest struct {
	Apps    []string `json:"apps"`
	Cascade string   `json:"cascade"`
	Confirm string   `json:"confirm"`
	// ConfirmResources also deletes each app's objects marked
	// Delete=confirm, as Argo CD's "Confirm Deletion" (the
	// argocd.argoproj.io/deletion-approved annotation) lets them go;
	// without it an app holding one is not deleted and its error names
	// them (deleteApp).
	ConfirmResources bool `json:"confirmResources"`
}

// bulkNames is apps without repeats, refused when empty or above maxBulk.
func bulkNames(apps []string) ([]string, error) {
	if len(apps) == 0 || len(apps) > maxBulk {
		return nil, fmt.Errorf("apps: name 1 to %d applications", maxBulk)
	}
	seen := make(map[string]bool, len(apps))
	out := make([]string, 0, len(apps))
	for _, a := range apps {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out, nil
}

// auditBulkRefusal audits one app of a bulk request refused before it ran.
func (s *server) auditBulkRefusal(c caller, action, name string, details map[string]any, why string) {
	rec := auditRecord{User: c.User, Groups: c.Groups, Via: c.Via, TokenID: c.TokenID, Action: action, App: name,
		Details: details, Outcome: refusedPrefix + why}
	if a, ok := s.app(name); ok {
		rec.Project = projectOf(a)
	}
	s.audit.record(rec)
}

// apiBulkRefresh refreshes each named app the caller may get (Argo CD's
// refresh is a get with ?refresh=normal|hard, so "applications, get", as
// for one app) and reports every other by name, each refusal audited as
// a refused single refresh is. A refresh changes nothing, so one that is
// queued is not audited, as for one app.
func (s *server) apiBulkRefresh(w http.ResponseWriter, r *http.Request, c caller) {
	var body bulkRefreshRequest
	if !readBody(w, r, &body) {
		return
	}
	names, err := bulkNames(body.Apps)
	if err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	out := bulkAnswer{Started: []string{}, Refused: []bulkRefusal{}}
	details := map[string]any{"hard": body.Hard, "bulk": true}
	for _, name := range names {
		a, _, err := s.appNamed(c, name, rbac.ResourceApplications, rbac.ActionGet)
		if err != nil {
			s.auditBulkRefusal(c, "refresh", name, details, err.Error())
		} else if err = s.refreshApp(r.Context(), a, body.Hard); err != nil {
			err = fmt.Errorf("application %s: refresh: %w", name, err)
		}
		if err != nil {
			out.Refused = append(out.Refused, bulkRefusal{App: name, Error: err.Error()})
			continue
		}
		out.Started = append(out.Started, name)
	}
	writeJSON(w, http.StatusAccepted, out)
}

// apiBulkDelete deletes each named app the caller may delete
// ("applications, delete" on its project, as for one app) with the
// cascade chosen, each in the background as one app's deletion
// (launchDelete, audited when it starts and ends), and reports every
// other by name, each refusal audited. The confirmation is the number of
// apps named, typed again; without it nothing is deleted (400).
// confirmResources approves the deletion of the objects marked
// Delete=confirm of every app named.
func (s *server) apiBulkDelete(w http.ResponseWriter, r *http.Request, c caller) {
	var body bulkDeleteRequest
	if !readBody(w, r, &body) {
		return
	}
	names, err := bulkNames(body.Apps)
	if err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	cascade, prop, err := parseCascade(body.Cascade)
	if err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	details := map[string]any{"cascade": cascade, "bulk": true, "confirmResources": body.ConfirmResources}
	if strings.TrimSpace(body.Confirm) != strconv.Itoa(len(names)) {
		msg := fmt.Sprintf("confirm: type the number of applications to delete (%d) to confirm their deletion", len(names))
		for _, name := range names {
			s.auditBulkRefusal(c, "delete", name, details, msg)
		}
		apiError(w, http.StatusBadRequest, msg)
		return
	}
	out := bulkAnswer{Started: []string{}, Refused: []bulkRefusal{}}
	for _, name := range names {
		a, _, err := s.appNamed(c, name, rbac.ResourceApplications, rbac.ActionDelete)
		if err != nil {
			s.auditBulkRefusal(c, "delete", name, details, err.Error())
		} else {
			err = s.launchDelete(c, a, cascade, gitops.DeleteRequest{Propagation: prop, ConfirmDelete: body.ConfirmResources}, details)
		}
		if err != nil {
			out.Refused = append(out.Refused, bulkRefusal{App: name, Error: err.Error()})
			continue
		}
		out.Started = append(out.Started, name)
	}
	writeJSON(w, http.StatusAccepted, out)
}
