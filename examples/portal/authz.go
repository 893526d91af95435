package main

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/rbac"
	"github.com/kubegitops/gitops/resource"
)

// authorizer decides requests in Argo CD's terms: may id do action on the
// object of resource. The portal has two: the role file (policy) and
// argocd-rbac-cm (argoRBAC).
type authorizer interface {
	allow(id identity, resource, action, object string) bool
	// decide is allow with the reason of a refusal: nil when allowed,
	// else an error saying what refused it, for the 403 and the audit
	// log.
	decide(id identity, resource, action, object string) error
	// decideResource decides action (update or delete) on one resource of
	// the app whose object is object (Argo CD 3's fine-grained
	// "<action>/<group>/<kind>/<namespace>/<name>").
	decideResource(id identity, action, object string, key resource.Key) error
	// secrets reports whether id may read Secret values in project.
	secrets(id identity, project string) bool
	// roleName summarises id's role for the page header.
	roleName(id identity) string
}

// allow maps a request of Argo CD's RBAC onto the role file: get on
// applications, applicationsets and logs, and get on projects, need a
// readonly role in the project; every other action on applications and
// applicationsets (sync, override, update, delete, action/...,
// update/... and delete/... on a resource) needs admin. Other resources
// are refused: the role file grants nothing outside applications.
func (p policy) allow(id identity, resource, action, object string) bool {
	project, _, _ := strings.Cut(object, "/")
	perms := p.permsFor(id.Groups, project)
	switch resource {
	case rbac.ResourceApplications, rbac.ResourceApplicationSets:
		if action == rbac.ActionGet {
			return perms.Read
		}
		return perms.Write
	case rbac.ResourceLogs:
		return action == rbac.ActionGet && perms.Read
	case rbac.ResourceProjects:
		return action == rbac.ActionGet && perms.Read
	}
	return false
}

// decide names the role a refused request lacks.
func (p policy) decide(id identity, resource, action, object string) error {
	if p.allow(id, resource, action, object) {
		return nil
	}
	switch resource {
	case rbac.ResourceApplications, rbac.ResourceApplicationSets, rbac.ResourceLogs:
	case rbac.ResourceProjects:
		if action != rbac.ActionGet {
			return fmt.Errorf("%w: %s, %s, %s: the role file grants only get on projects (authorise with argocd-rbac-cm: --rbac-cm or --rbac-namespace)",
				rbac.ErrPermissionDenied, resource, action, object)
		}
	default:
		return fmt.Errorf("%w: %s, %s: the role file grants nothing on %s (authorise with argocd-rbac-cm: --rbac-cm or --rbac-namespace)",
			rbac.ErrPermissionDenied, resource, action, resource)
	}
	project, _, _ := strings.Cut(object, "/")
	if resource == rbac.ResourceProjects {
		project = object
	}
	if action == rbac.ActionGet {
		return fmt.Errorf("%w: needs a readonly role in project %s", rbac.ErrPermissionDenied, project)
	}
	return fmt.Errorf("%w: needs an admin role in project %s", rbac.ErrPermissionDenied, project)
}

// decideResource: an admin of the project may update and delete its
// apps' resources.
func (p policy) decideResource(id identity, action, object string, key resource.Key) error {
	return p.decide(id, rbac.ResourceApplications, action, object)
}

// secrets is the role file's secrets grant.
func (p policy) secrets(id identity, project string) bool {
	return p.permsFor(id.Groups, project).Secrets
}

// roleName is the strongest role of id's groups.
func (p policy) roleName(id identity) string { return p.roleOf(id.Groups) }

// appPerms is what the caller may do with one app, for the UI: buttons
// it may not use are not shown.
type appPerms struct {
	// Get: see the app, its tree, resources and events, and refresh it.
	Get bool `json:"get"`
	// Sync: sync, roll back and terminate (Argo CD checks sync for all
	// three).
	Sync bool `json:"sync"`
	// Logs: read its pods' logs (logs, get).
	Logs bool `json:"logs"`
	// Exec: open a terminal into its Pods (argocd-cm's exec.enabled and
	// exec, create).
	Exec bool `json:"exec"`
	// Secrets: read Secret values unmasked.
	Secrets bool `json:"secrets"`
	// Update: edit the app's details (applications, update).
	Update bool `json:"update"`
	// Delete: delete the app (applications, delete). Deleting one of its
	// resources is asked per resource (resourcePerms).
	Delete bool `json:"delete"`
}

// appObject is an app's object in a request: "<project>/<app>".
func appObject(a *gitops.Application) string {
	return rbac.AppObject(projectOf(a), "", a.Name, "")
}

// permsOf is what c may do with a.
func (s *server) permsOf(c caller, a *gitops.Application) appPerms {
	obj := appObject(a)
	az := s.opts.Authz
	return appPerms{
		Get:     az.allow(c.identity, rbac.ResourceApplications, rbac.ActionGet, obj),
		Sync:    az.allow(c.identity, rbac.ResourceApplications, rbac.ActionSync, obj),
		Logs:    az.allow(c.identity, rbac.ResourceLogs, rbac.ActionGet, obj),
		Exec:    s.opts.Exec.get().Enabled && az.allow(c.identity, rbac.ResourceExec, rbac.ActionCreate, obj),
		Secrets: az.secrets(c.identity, projectOf(a)),
		Update:  az.allow(c.identity, rbac.ResourceApplications, rbac.ActionUpdate, obj),
		Delete:  az.allow(c.identity, rbac.ResourceApplications, rbac.ActionDelete, obj),
	}
}

// appFor is the one authorisation of every app route: it returns the app
// named in the path if the caller may get it (else 404, the answer for no
// such app, so names of other projects' apps do not leak) and may do
// action on resource for it (else 403). resource is applications or logs;
// action is get, sync, or a resource action (rbac.ResourceAction).
func (s *server) appFor(r *http.Request, c caller, resource, action string) (*gitops.Application, appPerms, error) {
	return s.appNamed(c, r.PathValue("name"), resource, action)
}

// appNamed is appFor for the app named name (a bulk request names several).
func (s *server) appNamed(c caller, name, resource, action string) (*gitops.Application, appPerms, error) {
	a, ok := s.app(name)
	if !ok || !s.opts.Authz.allow(c.identity, rbac.ResourceApplications, rbac.ActionGet, appObject(a)) {
		return nil, appPerms{}, &accessError{code: http.StatusNotFound, msg: fmt.Sprintf("application %s: not found or not permitted", name)}
	}
	if resource != rbac.ResourceApplications || action != rbac.ActionGet {
		if err := s.opts.Authz.decide(c.identity, resource, action, appObject(a)); err != nil {
			return nil, appPerms{}, &accessError{code: http.StatusForbidden, msg: fmt.Sprintf("application %s: %v", name, err), err: err}
		}
	}
	return a, s.permsOf(c, a), nil
}

// resourcePerms are appPerms with what the caller may do with one
// resource of the app (GET .../permissions?key=K).
type resourcePerms struct {
	appPerms
	// DeleteResource: delete that resource (Argo CD 3's "applications,
	// delete/<group>/<kind>/<namespace>/<name>", see decideResource).
	DeleteResource bool `json:"deleteResource"`
}

// apiPermissions answers what the caller may do with the app (appPerms),
// for the UI; with ?key=K, also whether it may delete that resource of
// the app.
func (s *server) apiPermissions(w http.ResponseWriter, r *http.Request, c caller) {
	a, p, err := s.appFor(r, c, rbac.ResourceApplications, rbac.ActionGet)
	if err != nil {
		deny(w, err)
		return
	}
	k := r.URL.Query().Get("key")
	if k == "" {
		writeJSON(w, http.StatusOK, p)
		return
	}
	key, err := resource.ParseKey(k)
	if err != nil {
		apiError(w, http.StatusBadRequest, "key: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, resourcePerms{appPerms: p,
		DeleteResource: s.opts.Authz.decideResource(c.identity, rbac.ActionDelete, appObject(a), key) == nil})
}
