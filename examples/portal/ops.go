package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/health/actions"
	"github.com/kubegitops/gitops/rbac"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
)

// maxBody bounds the JSON body of a POST.
const maxBody = 64 << 10

// readBody decodes a POST's JSON body strictly (an empty body is {}).
func readBody(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		apiError(w, http.StatusBadRequest, "request body: "+err.Error())
		return false
	}
	return true
}

// refreshRequest asks for a refresh; Hard also forgets the repositories'
// resolved branches and tags (Argo CD's hard refresh).
type refreshRequest struct {
	Hard bool `json:"hard"`
}

func (s *server) apiRefresh(w http.ResponseWriter, r *http.Request, c caller) {
	a, _, err := s.appFor(r, c, rbac.ResourceApplications, rbac.ActionGet) // Argo CD: refresh needs get
	if err != nil {
		s.denyChange(w, r, c, err)
		return
	}
	var req refreshRequest
	if !readBody(w, r, &req) {
		return
	}
	if err := s.refreshApp(r.Context(), a, req.Hard); err != nil {
		apiError(w, http.StatusConflict, fmt.Sprintf("application %s: refresh: %v", a.Name, err))
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"refresh": "queued", "hard": req.Hard})
}

// syncRequest is the sync dialog's choice.
type syncRequest struct {
	Prune        bool     `json:"prune"`
	DryRun       bool     `json:"dryRun"`
	Resources    []string `json:"resources,omitempty"`
	ConfirmPrune bool     `json:"confirmPrune"`
	Revision     string   `json:"revision,omitempty"`
	// SyncOptions and Retry are the dialog's sync options and retry
	// (applySyncOptions).
	SyncOptions []string      `json:"syncOptions,omitempty"`
	Retry       *retryRequest `json:"retry,omitempty"`
}

func (s *server) apiSync(w http.ResponseWriter, r *http.Request, c caller) {
	a, _, err := s.appFor(r, c, rbac.ResourceApplications, rbac.ActionSync)
	if err != nil {
		s.denyChange(w, r, c, err)
		return
	}
	var body syncRequest
	if !readBody(w, r, &body) {
		return
	}
	req := gitops.SyncRequest{Prune: body.Prune, DryRun: body.DryRun, ConfirmPrune: body.ConfirmPrune, Manual: true}
	if body.Revision != "" {
		req.Revisions = []string{body.Revision}
	}
	for _, ks := range body.Resources {
		k, err := resource.ParseKey(ks)
		if err != nil {
			apiError(w, http.StatusBadRequest, fmt.Sprintf("resources: %q: %v", ks, err))
			return
		}
		req.Resources = append(req.Resources, k)
	}
	if err := applySyncOptions(&req, body.SyncOptions, body.Retry); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	details := map[string]any{"prune": body.Prune, "dryRun": body.DryRun, "resources": body.Resources, "confirmPrune": body.ConfirmPrune, "revision": body.Revision,
		"syncOptions": body.SyncOptions, "retry": body.Retry}
	if err := s.launchSync(c, a, req, details); err != nil {
		code := http.StatusConflict
		var re *refusedSync
		if errors.As(err, &re) {
			code = http.StatusForbidden
		}
		apiError(w, code, err.Error())
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"operation": "sync", "state": "started"})
}

// refusedSync is a sync the engine refused before it started
// (Engine.CheckSync): its project, the project's rules or sync windows.
type refusedSync struct{ err error }

// Error is the engine's reason for the refusal.
func (e *refusedSync) Error() string { return e.err.Error() }

// Unwrap returns the engine's error (a project or sync-window error).
func (e *refusedSync) Unwrap() error { return e.err }

// launchSync starts req on a in the background (launchOperation) unless
// the engine would refuse it at once (Engine.CheckSync: the project's
// rules and sync windows, as Argo CD's API server refuses a sync), which
// is audited as refused and returned as a *refusedSync; a dry run only
// meets the project's rules, as in Sync.
func (s *server) launchSync(c caller, a *gitops.Application, req gitops.SyncRequest, details map[string]any) error {
	if err := s.opts.Engine.CheckSync(a, req.Manual); err != nil {
		var we *engine.SyncWindowError
		if !req.DryRun || !errors.As(err, &we) {
			s.audit.write(c.identity, "sync", a, details, outcomeOf("", err))
			return &refusedSync{err}
		}
	}
	return s.launchOperation(c, a, "sync", details, func(ctx context.Context) (sync.Result, error) {
		return s.syncApp(ctx, c, a, req)
	})
}

// rollbackRequest names the history entry to sync again.
type rollbackRequest struct {
	ID    int64 `json:"id"`
	Prune bool  `json:"prune"`
}

func (s *server) apiRollback(w http.ResponseWriter, r *http.Request, c caller) {
	a, _, err := s.appFor(r, c, rbac.ResourceApplications, rbac.ActionSync) // Argo CD: rollback needs sync
	if err != nil {
		s.denyChange(w, r, c, err)
		return
	}
	var body rollbackRequest
	if !readBody(w, r, &body) {
		return
	}
	if body.ID <= 0 {
		apiError(w, http.StatusBadRequest, "id: a history entry id (from 1) is required")
		return
	}
	s.startOperation(w, c, a, "rollback", map[string]any{"id": body.ID, "prune": body.Prune}, func(ctx context.Context) (sync.Result, error) {
		return s.rollbackApp(ctx, c, a, body.ID, body.Prune)
	})
}

// startOperation runs op in the background (it outlives the request),
// one at a time per app, audits it, and pushes its end to the app's pages.
func (s *server) startOperation(w http.ResponseWriter, c caller, a *gitops.Application, what string, details map[string]any, op func(context.Context) (sync.Result, error)) {
	if err := s.launchOperation(c, a, what, details, op); err != nil {
		apiError(w, http.StatusConflict, err.Error())
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"operation": what, "state": "started"})
}

// launchOperation is startOperation without the answer: it refuses (and
// audits) an app whose operation still runs.
func (s *server) launchOperation(c caller, a *gitops.Application, what string, details map[string]any, op func(context.Context) (sync.Result, error)) error {
	s.opsMu.Lock()
	if _, busy := s.ops[a.Name]; busy {
		s.opsMu.Unlock()
		msg := fmt.Sprintf("application %s: an operation started here is still running; terminate it first", a.Name)
		s.audit.write(c.identity, what, a, details, refusedPrefix+msg)
		return errors.New(msg)
	}
	ctx, cancel := context.WithCancel(s.bg)
	s.ops[a.Name] = cancel
	s.opsMu.Unlock()
	s.audit.write(c.identity, what, a, details, "started")
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() {
			s.opsMu.Lock()
			delete(s.ops, a.Name)
			s.opsMu.Unlock()
			cancel()
		}()
		res, err := op(ctx)
		view := operationView{Phase: string(res.Phase), Message: res.Message, Rows: resultRows(res.Results)}
		for _, k := range res.PendingConfirmation {
			view.PendingConfirmation = append(view.PendingConfirmation, k.String())
		}
		outcome := outcomeOf(string(res.Phase), err)
		if err != nil {
			view.Message = err.Error()
			if view.Phase == "" {
				view.Phase = string(sync.Failed)
			}
		}
		s.audit.write(c.identity, what, a, details, outcome)
		s.opts.Hooks.broker.publish(a.Name, streamEvent{Name: "operation", Data: view})
		// The run loop refreshes on the cluster's events; ask at once too
		// (with the app as it is now: it may have been edited meanwhile).
		if cur, ok := s.app(a.Name); ok {
			s.reconcileNow(s.bg, cur)
		}
	}()
	return nil
}

func (s *server) apiTerminate(w http.ResponseWriter, r *http.Request, c caller) {
	a, _, err := s.appFor(r, c, rbac.ResourceApplications, rbac.ActionSync) // Argo CD: terminate needs sync
	if err != nil {
		s.denyChange(w, r, c, err)
		return
	}
	err = s.terminateApp(r.Context(), a)
	outcome := "terminating"
	if err != nil {
		outcome = "error: " + err.Error()
	}
	s.audit.write(c.identity, "terminate", a, nil, outcome)
	if err != nil {
		apiError(w, http.StatusConflict, fmt.Sprintf("application %s: terminate: %v", a.Name, err))
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"operation": "terminate", "state": "requested"})
}

// actionView is one resource action and whether the caller may run it.
type actionView struct {
	actions.Action
	// Permitted: the caller has action/<group>/<kind>/<name> on the app.
	Permitted bool `json:"permitted"`
}

func (s *server) apiActions(w http.ResponseWriter, r *http.Request, c caller) {
	a, _, err := s.appFor(r, c, rbac.ResourceApplications, rbac.ActionGet)
	if err != nil {
		deny(w, err)
		return
	}
	key, err := resource.ParseKey(r.URL.Query().Get("key"))
	if err != nil {
		apiError(w, http.StatusBadRequest, "key: "+err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), kubeTimeout)
	defer cancel()
	list, err := s.opts.Engine.Actions(ctx, a, key)
	if err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	out := make([]actionView, 0, len(list))
	for _, act := range list {
		out = append(out, actionView{Action: act, Permitted: s.opts.Authz.allow(c.identity, rbac.ResourceApplications,
			rbac.ResourceAction(key.Group, key.Kind, act.Name), appObject(a))})
	}
	writeJSON(w, http.StatusOK, out)
}

// actionRequest runs one resource action.
type actionRequest struct {
	Key    string            `json:"key"`
	Action string            `json:"action"`
	Params map[string]string `json:"params,omitempty"`
}

func (s *server) apiAction(w http.ResponseWriter, r *http.Request, c caller) {
	if _, _, err := s.appFor(r, c, rbac.ResourceApplications, rbac.ActionGet); err != nil {
		s.denyChange(w, r, c, err)
		return
	}
	var body actionRequest
	if !readBody(w, r, &body) {
		return
	}
	key, err := resource.ParseKey(body.Key)
	if err != nil || strings.TrimSpace(body.Action) == "" {
		apiError(w, http.StatusBadRequest, "key and action are required")
		return
	}
	a, _, err := s.appFor(r, c, rbac.ResourceApplications, rbac.ResourceAction(key.Group, key.Kind, body.Action))
	if err != nil {
		s.denyChange(w, r, c, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), kubeTimeout*3)
	defer cancel()
	res, err := s.opts.Engine.RunAction(ctx, a, key, body.Action, body.Params)
	outcome := "done"
	if err != nil {
		outcome = "error: " + err.Error()
	}
	s.audit.write(c.identity, "action", a, map[string]any{"key": body.Key, "action": body.Action, "params": body.Params}, outcome)
	if err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	if cur, ok := s.app(a.Name); ok {
		s.reconcileNow(r.Context(), cur)
	}
	writeJSON(w, http.StatusOK, res)
}
