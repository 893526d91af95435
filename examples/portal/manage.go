package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/rbac"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// createRequest is the create form: an Application's usual fields.
type createRequest struct {
	Name           string `json:"name"`
	Project        string `json:"project"`
	RepoURL        string `json:"repoURL"`
	Path           string `json:"path"`
	TargetRevision string `json:"targetRevision"`
	// Cluster is the destination cluster's name or server URL (one with
	// "://" is a server).
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	Automated bool   `json:"automated"`
	Prune     bool   `json:"prune"`
	SelfHeal  bool   `json:"selfHeal"`
}

// application is the Application the form describes.
func (cr createRequest) application() *gitops.Application {
	a := &gitops.Application{}
	a.APIVersion, a.Kind = "argoproj.io/v1alpha1", "Application"
	a.Name = strings.TrimSpace(cr.Name)
	a.Spec.Project = strings.TrimSpace(cr.Project)
	if a.Spec.Project == "" {
		a.Spec.Project = "default"
	}
	a.Spec.Source = &v1alpha1.ApplicationSource{RepoURL: strings.TrimSpace(cr.RepoURL), Path: strings.TrimSpace(cr.Path),
		TargetRevision: strings.TrimSpace(cr.TargetRevision)}
	if cl := strings.TrimSpace(cr.Cluster); strings.Contains(cl, "://") {
		a.Spec.Destination.Server = cl
	} else {
		a.Spec.Destination.Name = cl
	}
	a.Spec.Destination.Namespace = strings.TrimSpace(cr.Namespace)
	if cr.Automated {
		a.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: cr.Prune, SelfHeal: cr.SelfHeal}}
	}
	return a
}

// apiCreate creates an app from the form: validated as the loader
// validates a file's Applications (Validate), authorised with
// "applications, create, <project>/<name>", refused when the name is
// taken, the project unknown or its rules refuse the app's sources or
// destination (Engine.CheckApplication, as Argo CD refuses at create); then the engine reconciles it (and syncs
// it when automated) and the list pages are told.
func (s *server) apiCreate(w http.ResponseWriter, r *http.Request, c caller) {
	var body createRequest
	if !readBody(w, r, &body) {
		return
	}
	a := body.application()
	details := map[string]any{"repoURL": a.Spec.Source.RepoURL, "path": a.Spec.Source.Path, "automated": body.Automated}
	refuse := func(code int, msg string) {
		s.audit.record(auditRecord{User: c.User, Groups: c.Groups, Via: c.Via, TokenID: c.TokenID, Action: "create", App: a.Name,
			Project: a.Spec.Project, Details: details, Outcome: refusedPrefix + msg})
		apiError(w, code, msg)
	}
	if err := a.Validate(); err != nil {
		refuse(http.StatusBadRequest, err.Error())
		return
	}
	if err := s.opts.Authz.decide(c.identity, rbac.ResourceApplications, rbac.ActionCreate, appObject(a)); err != nil {
		refuse(http.StatusForbidden, fmt.Sprintf("application %s: %v", a.Name, err))
		return
	}
	if _, err := s.opts.Engine.Settings().Project(a.Spec.Project); err != nil {
		refuse(http.StatusBadRequest, fmt.Sprintf("application %s: %v", a.Name, err))
		return
	}
	// As Argo CD's API server: the project must allow the app (its
	// sources and destination, a cluster named resolved to its server).
	if err := s.opts.Engine.CheckApplication(a); err != nil {
		refuse(http.StatusBadRequest, fmt.Sprintf("application %s: %v", a.Name, err))
		return
	}
	if s.ns != nil {
		n, err := s.ns.create(r.Context(), a)
		if err != nil {
			refuse(http.StatusConflict, err.Error())
			return
		}
		a = n
		s.putApp(a)
	} else if err := s.addApp(a); err != nil {
		refuse(http.StatusConflict, err.Error())
		return
	} else if err := s.writeCreate(a); err != nil {
		s.removeApp(a.Name)
		refuse(http.StatusConflict, err.Error())
		return
	} else if err := s.opts.Engine.Apps().Upsert(*a); err != nil {
		s.removeApp(a.Name)
		_ = s.writeRemove(a.Name)
		refuse(http.StatusBadRequest, fmt.Sprintf("application %s: %v", a.Name, err))
		return
	}
	s.audit.write(c.identity, "create", a, details, "created")
	s.opts.Hooks.list.publish(listTopic, streamEvent{Name: "created", Data: a.Name})
	writeJSON(w, http.StatusCreated, s.rowOf(a))
}

// Cascade choices of an app's deletion, as Argo CD's delete dialog offers
// them.
const (
	cascadeForeground = "foreground"
	cascadeBackground = "background"
	cascadeNone       = "non-cascading"
)

// deleteAppRequest is the delete dialog: the cascade and, as Argo CD asks,
// the app's name typed again.
type deleteAppRequest struct {
	Cascade string `json:"cascade"`
	Confirm string `json:"confirm"`
	// ConfirmResources also deletes the objects marked Delete=confirm
	// (DeleteRequest.ConfirmDelete); without it the deletion stops and
	// names them.
	ConfirmResources bool `json:"confirmResources"`
}

// deleteAppTimeout bounds one app's cascading deletion.
const deleteAppTimeout = 5 * time.Minute

// apiDeleteApp deletes an app (applications, delete): foreground and
// background delete its objects with that propagation (Engine.Delete,
// called until Done), non-cascading leaves them; then the app leaves the
// engine's run loop and the list, and the list pages are told. It runs
// in the background, like a sync, one operation per app at a time.
func (s *server) apiDeleteApp(w http.ResponseWriter, r *http.Request, c caller) {
	a, _, err := s.appFor(r, c, rbac.ResourceApplications, rbac.ActionDelete)
	if err != nil {
		s.denyChange(w, r, c, err)
		return
	}
	var body deleteAppRequest
	if !readBody(w, r, &body) {
		return
	}
	details := map[string]any{"cascade": body.Cascade, "confirmResources": body.ConfirmResources}
	cascade, prop, err := parseCascade(body.Cascade)
	if err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	if body.Confirm != a.Name {
		msg := fmt.Sprintf("application %s: type the application's name to confirm its deletion", a.Name)
		s.audit.write(c.identity, "delete", a, details, refusedPrefix+msg)
		apiError(w, http.StatusBadRequest, msg)
		return
	}
	if err := s.launchDelete(c, a, cascade, gitops.DeleteRequest{Propagation: prop, ConfirmDelete: body.ConfirmResources}, details); err != nil {
		apiError(w, http.StatusConflict, err.Error())
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"operation": "delete", "state": "started", "cascade": cascade})
}

// parseCascade reads a delete dialog's cascade choice (empty is
// foreground) into its propagation; non-cascading has none.
func parseCascade(cascade string) (string, metav1.DeletionPropagation, error) {
	switch cascade {
	case cascadeForeground, "":
		return cascadeForeground, metav1.DeletePropagationForeground, nil
	case cascadeBackground:
		return cascade, metav1.DeletePropagationBackground, nil
	case cascadeNone:
		return cascade, "", nil
	}
	return "", "", fmt.Errorf("cascade %q: want foreground, background or non-cascading", cascade)
}

// launchDelete starts a's deletion in the background (deleteApp), audited
// when it starts and when it ends; refused, and audited so, while an
// operation started here runs on a.
func (s *server) launchDelete(c caller, a *gitops.Application, cascade string, req gitops.DeleteRequest, details map[string]any) error {
	s.opsMu.Lock()
	if _, busy := s.ops[a.Name]; busy {
		s.opsMu.Unlock()
		msg := fmt.Sprintf("application %s: an operation started here is still running; terminate it first", a.Name)
		s.audit.write(c.identity, "delete", a, details, refusedPrefix+msg)
		return errors.New(msg)
	}
	ctx, cancel := context.WithTimeout(s.bg, deleteAppTimeout)
	s.ops[a.Name] = cancel
	s.opsMu.Unlock()
	s.audit.write(c.identity, "delete", a, details, "started")
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() {
			s.opsMu.Lock()
			delete(s.ops, a.Name)
			s.opsMu.Unlock()
			cancel()
		}()
		outcome := "deleted"
		if err := s.deleteApp(ctx, a, cascade, req); err != nil {
			outcome = "error: " + err.Error()
			s.opts.Hooks.broker.publish(a.Name, streamEvent{Name: "operation", Data: operationView{Phase: "Error", Message: err.Error()}})
		}
		s.audit.write(c.identity, "delete", a, details, outcome)
	}()
	return nil
}

// deleteApp deletes a's objects (unless non-cascading), then forgets a.
func (s *server) deleteApp(ctx context.Context, a *gitops.Application, cascade string, req gitops.DeleteRequest) error {
	if s.ns != nil {
		return s.ns.delete(ctx, a, cascade, req.ConfirmDelete)
	}
	if cascade != cascadeNone {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			res, err := s.opts.Engine.Delete(ctx, a, req)
			if err != nil {
				return err
			}
			if res.Done() {
				break
			}
			if len(res.PendingConfirmation) > 0 && len(res.Deleted) == 0 && len(res.Remaining) == 0 {
				return fmt.Errorf("application %s: %d objects are marked Delete=confirm and wait for confirmation: %v",
					a.Name, len(res.PendingConfirmation), res.PendingConfirmation)
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("application %s: deletion not done: %w", a.Name, ctx.Err())
			case <-tick.C:
			}
		}
	}
	if err := s.writeRemove(a.Name); err != nil {
		return err
	}
	if err := s.opts.Engine.Apps().Remove(v1alpha1.KeyOf(a)); err != nil {
		return err
	}
	s.removeApp(a.Name)
	s.opts.Hooks.list.publish(listTopic, streamEvent{Name: "removed", Data: removedApp{Name: a.Name, Project: projectOf(a)}})
	s.opts.Hooks.broker.publish(a.Name, streamEvent{Name: "removed", Data: removedApp{Name: a.Name, Project: projectOf(a)}})
	return nil
}
