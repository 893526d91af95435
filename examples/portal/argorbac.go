package main

import (
	"errors"
	"fmt"
	"os"
	gosync "sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/rbac"
	"github.com/kubegitops/gitops/resource"
)

// argoRBAC authorises with argocd-rbac-cm and the AppProjects' roles, as
// Argo CD's API server does: each subject (the user, then each of its
// groups) on its own, allowed if any is. The subject is the user (the
// token file's user, or the OIDC email or sub) with its groups, or a
// project role for a project token.
//
// What it decides with can change while the portal runs (--rbac-namespace,
// --projects-namespace): argocd-rbac-cm, the projects, argocd-cm's
// fine-grained inheritance and argocd-secret's server.secretkey. Each
// change builds a new enforcer for the next request; one that does not
// build is refused and the last good one kept.
type argoRBAC struct {
	// enforcer is replaced whole on each change (rebuild).
	enforcer atomic.Pointer[rbac.Enforcer]
	// secretKey is argocd-secret's server.secretkey: the key project
	// tokens are signed with; nil: project tokens are refused.
	secretKey atomic.Pointer[[]byte]
	// byName are the projects whose roles apply, for project tokens'
	// jwtTokens; replaced whole with the enforcer.
	byName atomic.Pointer[map[string]*gitops.Project]

	// mu serialises rebuilds; it guards the inputs below.
	mu       gosync.Mutex
	cfg      *rbac.Config
	projects []gitops.Project
	opts     rbac.EnforcerOptions
	// now is the clock of token expiry.
	now func() time.Time
}

// newArgoRBAC builds the enforcer from argocd-rbac-cm and the engine's
// AppProjects (their roles become project policy).
func newArgoRBAC(cfg *rbac.Config, projects []gitops.Project) (*argoRBAC, error) {
	a := &argoRBAC{cfg: cfg, projects: projects, opts: rbac.DefaultEnforcerOptions(), now: time.Now}
	if err := a.rebuild(); err != nil {
		return nil, err
	}
	return a, nil
}

// rebuild builds the enforcer of the current inputs; a.mu is held, or a
// is not shared yet. On error nothing changes.
func (a *argoRBAC) rebuild() error {
	e, err := rbac.NewEnforcerWithOptions(a.cfg, a.projects, a.opts)
	if err != nil {
		return err
	}
	byName := make(map[string]*gitops.Project, len(a.projects))
	for i := range a.projects {
		byName[a.projects[i].Name] = &a.projects[i]
	}
	a.enforcer.Store(e)
	a.byName.Store(&byName)
	return nil
}

// reload replaces the policy with argocd-rbac-cm's data (nil: the
// ConfigMap is gone, leaving Argo CD's built-in roles only). A bad policy
// is refused and the last good one kept.
func (a *argoRBAC) reload(data map[string]string) error {
	cfg, err := rbac.Load(data)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	prev := a.cfg
	a.cfg = cfg
	if err := a.rebuild(); err != nil {
		a.cfg = prev
		return err
	}
	return nil
}

// setProjects replaces the projects whose roles apply. A project whose
// roles do not load (a policy line Argo CD refuses) is left out, its roles
// granting nothing and its tokens refused, and named in the error; the
// others apply.
func (a *argoRBAC) setProjects(projects []gitops.Project) error {
	var good []gitops.Project
	var errs []error
	for _, p := range projects {
		if _, err := rbac.ProjectPolicies([]v1alpha1.AppProject{p}); err != nil {
			errs = append(errs, fmt.Errorf("AppProject %s left out of RBAC: %w", p.Name, err))
			continue
		}
		good = append(good, p)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	prev := a.projects
	a.projects = good
	if err := a.rebuild(); err != nil {
		a.projects = prev
		return err
	}
	return errors.Join(errs...)
}

// setInheritance sets argocd-cm's fine-grained inheritance (see
// rbac.InheritanceFromArgoCDCM).
func (a *argoRBAC) setInheritance(inherit bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	prev := a.opts
	a.opts.ResourceInheritance = inherit
	if err := a.rebuild(); err != nil {
		a.opts = prev
		return err
	}
	return nil
}

// setSecretKey sets the key project tokens are verified with (nil: none,
// project tokens are refused).
func (a *argoRBAC) setSecretKey(key []byte) {
	if len(key) == 0 {
		a.secretKey.Store(nil)
		return
	}
	k := append([]byte(nil), key...)
	a.secretKey.Store(&k)
}

// projectToken authenticates a bearer token as a project token (see
// rbac.VerifyProjectToken) against the projects as they are now: a token
// whose entry was removed from its role's jwtTokens is refused from the
// next request on. The error wraps rbac.ErrNotProjectToken when the token
// is not one.
func (a *argoRBAC) projectToken(token string) (identity, error) {
	var key []byte
	if k := a.secretKey.Load(); k != nil {
		key = *k
	}
	byName := *a.byName.Load()
	lookup := func(name string) (*v1alpha1.AppProject, bool) {
		p, ok := byName[name]
		return p, ok
	}
	t, err := rbac.VerifyProjectToken(token, key, lookup, a.now())
	if err != nil {
		return identity{}, err
	}
	return identity{User: t.Subject().Name, Via: "project-token", TokenID: t.ID}, nil
}

func (a *argoRBAC) subject(id identity) rbac.Subject {
	return rbac.Subject{Name: id.User, Groups: id.Groups}
}

func (a *argoRBAC) allow(id identity, resource, action, object string) bool {
	return a.enforcer.Load().Enforce(a.subject(id), resource, action, object)
}

// decide is the enforcer's decision; a refusal is an *rbac.DeniedError
// naming each subject checked and the line that refused it.
func (a *argoRBAC) decide(id identity, resource, action, object string) error {
	return a.enforcer.Load().Decide(a.subject(id), resource, action, object).Err()
}

// decideResource is Argo CD 3's fine-grained decision on one resource
// (rbac.Enforcer.DecideResource).
func (a *argoRBAC) decideResource(id identity, action, object string, key resource.Key) error {
	return a.enforcer.Load().DecideResource(a.subject(id), action, object, key.Group, key.Kind, key.Namespace, key.Name).Err()
}

// secrets is always false: Argo CD never shows Secret values, whatever
// the role.
func (a *argoRBAC) secrets(identity, string) bool { return false }

// roleName names where the roles come from; what the user may do is per
// app (appPerms).
func (a *argoRBAC) roleName(identity) string { return "argocd-rbac" }

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
