package main

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	gosync "sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/rbac"
)

// authorizer decides requests in Argo CD's terms: may id do action on the
// object of resource. The portal has two: the role file (policy) and
// argocd-rbac-cm (argoRBAC).
type authorizer interface {
	allow(id identity, resource, action, object string) bool
	// secrets reports whether id may read Secret values in project.
	secrets(id identity, project string) bool
	// roleName summarises id's role for the page header.
	roleName(id identity) string
	// need says what a refused request lacks, for its error.
	need(resource, action, object string) string
}

// allow maps a request of Argo CD's RBAC onto the role file: get on
// applications and logs, and get on projects, need a readonly role in
// the project; every other action on applications (sync, override,
// update, delete, action/...) needs admin. Other resources are refused:
// the role file grants nothing outside applications.
func (p policy) allow(id identity, resource, action, object string) bool {
	project, _, _ := strings.Cut(object, "/")
	perms := p.permsFor(id.Groups, project)
	switch resource {
	case rbac.ResourceApplications:
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

// secrets is the role file's secrets grant.
func (p policy) secrets(id identity, project string) bool {
	return p.permsFor(id.Groups, project).Secrets
}

// roleName is the strongest role of id's groups.
func (p policy) roleName(id identity) string { return p.roleOf(id.Groups) }

// need names the role a refused request lacks.
func (p policy) need(resource, action, object string) string {
	project, _, _ := strings.Cut(object, "/")
	if action == rbac.ActionGet {
		return "needs a readonly role in project " + project
	}
	return "needs an admin role in project " + project
}

// argoRBAC authorises with argocd-rbac-cm and the AppProjects' roles, as
// Argo CD's API server does. The subject is the user (the token file's
// user, or the OIDC email or sub) with its groups.
type argoRBAC struct {
	// enforcer is replaced whole when argocd-rbac-cm changes (reload).
	enforcer atomic.Pointer[rbac.Enforcer]
	// mu serialises the rebuilds of the enforcer from cfg and projects
	// (reload, setProjects).
	mu       gosync.Mutex
	cfg      *rbac.Config
	projects []gitops.Project
}

// newArgoRBAC builds the enforcer from argocd-rbac-cm and the engine's
// AppProjects (their roles become project policy).
func newArgoRBAC(cfg *rbac.Config, projects []gitops.Project) (*argoRBAC, error) {
	e, err := rbac.NewEnforcer(cfg, projects)
	if err != nil {
		return nil, err
	}
	a := &argoRBAC{cfg: cfg, projects: projects}
	a.enforcer.Store(e)
	return a, nil
}

func (a *argoRBAC) allow(id identity, resource, action, object string) bool {
	return a.enforcer.Load().Enforce(rbac.Subject{Name: id.User, Groups: id.Groups}, resource, action, object)
}

// secrets is always false: Argo CD never shows Secret values, whatever
// the role.
func (a *argoRBAC) secrets(identity, string) bool { return false }

// roleName names where the roles come from; what the user may do is per
// app (appPerms).
func (a *argoRBAC) roleName(identity) string { return "argocd-rbac" }

// need names the permission a refused request lacks, as a policy line
// would grant it.
func (a *argoRBAC) need(resource, action, object string) string {
	return fmt.Sprintf("argocd-rbac-cm grants no %s, %s, %s", resource, action, object)
}

// loadRBACConfigMap reads argocd-rbac-cm from a ConfigMap manifest file
// (YAML or JSON) and parses its data as Argo CD does (rbac.Load).
func loadRBACConfigMap(file string) (*rbac.Config, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--rbac-cm: %w", err)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(b, &cm); err != nil {
		return nil, fmt.Errorf("--rbac-cm %s: %w", file, err)
	}
	if cm.Kind != "ConfigMap" {
		return nil, fmt.Errorf("--rbac-cm %s: kind %q, want a ConfigMap (argocd-rbac-cm)", file, cm.Kind)
	}
	cfg, err := rbac.Load(cm.Data)
	if err != nil {
		return nil, fmt.Errorf("--rbac-cm %s (ConfigMap %s): %w", file, cm.Name, err)
	}
	return cfg, nil
}

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
	// Secrets: read Secret values unmasked.
	Secrets bool `json:"secrets"`
	// Update: edit the app's details (applications, update).
	Update bool `json:"update"`
	// Delete: delete the app or one of its resources (applications,
	// delete).
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
		return nil, appPerms{}, &accessError{http.StatusNotFound, fmt.Sprintf("application %s: not found or not permitted", name)}
	}
	if (resource != rbac.ResourceApplications || action != rbac.ActionGet) &&
		!s.opts.Authz.allow(c.identity, resource, action, appObject(a)) {
		return nil, appPerms{}, &accessError{http.StatusForbidden, fmt.Sprintf("permission denied on application %s: %s",
			name, s.opts.Authz.need(resource, action, appObject(a)))}
	}
	return a, s.permsOf(c, a), nil
}

// apiPermissions answers what the caller may do with the app (appPerms),
// for the UI.
func (s *server) apiPermissions(w http.ResponseWriter, r *http.Request, c caller) {
	_, p, err := s.appFor(r, c, rbac.ResourceApplications, rbac.ActionGet)
	if err != nil {
		deny(w, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}
