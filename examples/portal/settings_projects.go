package main

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/rbac"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// projectView is one AppProject as the Projects page shows it, as Argo
// CD's project details do: its rules, sync windows and roles (never a
// token: a role's tokens are counted).
type projectView struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	SourceRepos  []string        `json:"sourceRepos"`
	Destinations []destination   `json:"destinations"`
	ClusterAllow []string        `json:"clusterResourceWhitelist"`
	ClusterDeny  []string        `json:"clusterResourceBlacklist"`
	NSAllow      []string        `json:"namespaceResourceWhitelist"`
	NSDeny       []string        `json:"namespaceResourceBlacklist"`
	SyncWindows  []projectWindow `json:"syncWindows"`
	Roles        []projectRole   `json:"roles"`
	// Error is why the project does not load (its apps are refused with
	// it); the rest of the view is then empty.
	Error         string `json:"error,omitempty"`
	Update        bool   `json:"update"`
	Delete        bool   `json:"delete"`
	UpdateRefused string `json:"updateRefused,omitempty"`
}

// destination is one of a project's destinations: a server or a
// cluster name, and a namespace (globs).
type destination struct {
	Server    string `json:"server,omitempty"`
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace"`
}

// projectWindow is one sync window of a project.
type projectWindow struct {
	Kind         string   `json:"kind"`
	Schedule     string   `json:"schedule"`
	Duration     string   `json:"duration"`
	TimeZone     string   `json:"timeZone,omitempty"`
	ManualSync   bool     `json:"manualSync"`
	Applications []string `json:"applications,omitempty"`
	Namespaces   []string `json:"namespaces,omitempty"`
	Clusters     []string `json:"clusters,omitempty"`
}

// projectRole is one role of a project: its policy and groups, and how
// many tokens were issued for it.
type projectRole struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Policies    []string `json:"policies"`
	Groups      []string `json:"groups"`
	Tokens      int      `json:"tokens"`
}

// groupKinds writes each restriction as "group/kind" ("" group: the
// core).
func groupKinds[T any](items []T, f func(T) (string, string)) []string {
	out := []string{}
	for _, it := range items {
		g, k := f(it)
		out = append(out, g+"/"+k)
	}
	return out
}

// projectViewOf is p as the page shows it.
func projectViewOf(p *gitops.Project) projectView {
	sp := p.Spec
	v := projectView{Name: p.Name, Description: sp.Description, SourceRepos: append([]string{}, sp.SourceRepos...),
		Destinations: []destination{}, SyncWindows: []projectWindow{}, Roles: []projectRole{},
		ClusterAllow: groupKinds(sp.ClusterResourceWhitelist, func(i v1alpha1.ClusterResourceRestrictionItem) (string, string) { return i.Group, i.Kind }),
		ClusterDeny:  groupKinds(sp.ClusterResourceBlacklist, func(i v1alpha1.ClusterResourceRestrictionItem) (string, string) { return i.Group, i.Kind }),
		NSAllow:      groupKinds(sp.NamespaceResourceWhitelist, func(i metav1.GroupKind) (string, string) { return i.Group, i.Kind }),
		NSDeny:       groupKinds(sp.NamespaceResourceBlacklist, func(i metav1.GroupKind) (string, string) { return i.Group, i.Kind })}
	for _, d := range sp.Destinations {
		v.Destinations = append(v.Destinations, destination{Server: d.Server, Name: d.Name, Namespace: d.Namespace})
	}
	for _, w := range sp.SyncWindows {
		v.SyncWindows = append(v.SyncWindows, projectWindow{Kind: w.Kind, Schedule: w.Schedule, Duration: w.Duration, TimeZone: w.TimeZone,
			ManualSync: w.ManualSync, Applications: w.Applications, Namespaces: w.Namespaces, Clusters: w.Clusters})
	}
	for _, r := range sp.Roles {
		v.Roles = append(v.Roles, projectRole{Name: r.Name, Description: r.Description, Policies: append([]string{}, r.Policies...),
			Groups: append([]string{}, r.Groups...), Tokens: len(r.JWTTokens)})
	}
	return v
}

// projectList is every AppProject: the namespace's (those that did not
// load with why), else the engine's.
func (s *server) projectList() []projectView {
	var loaded []gitops.Project
	var refused map[string]error
	if s.ns != nil {
		if ps := s.ns.projects.Load(); ps != nil {
			loaded, refused = ps.loaded, ps.refused
		}
	} else {
		loaded = s.opts.Engine.Settings().Options().Projects
	}
	out := make([]projectView, 0, len(loaded)+len(refused))
	for i := range loaded {
		out = append(out, projectViewOf(&loaded[i]))
	}
	for name, err := range refused {
		out = append(out, projectView{Name: name, Error: err.Error(), SourceRepos: []string{}, Destinations: []destination{},
			SyncWindows: []projectWindow{}, Roles: []projectRole{}})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// projects are the projects c may get ("projects, get" on the name),
// with what c may do with each.
func (s *server) projects(c caller) []projectView {
	out := []projectView{}
	for _, v := range s.projectList() {
		if !s.opts.Authz.allow(c.identity, rbac.ResourceProjects, rbac.ActionGet, v.Name) {
			continue
		}
		if s.ns != nil {
			v.UpdateRefused = s.refusal(c, rbac.ResourceProjects, rbac.ActionUpdate, v.Name, "")
			v.Update = v.UpdateRefused == "" && v.Error == ""
			v.Delete = v.Name != defaultProject && s.opts.Authz.allow(c.identity, rbac.ResourceProjects, rbac.ActionDelete, v.Name)
		}
		out = append(out, v)
	}
	return out
}

// projectsPage is GET /settings/projects.
func (s *server) projectsPage(w http.ResponseWriter, r *http.Request, c caller) {
	create := ""
	if s.ns != nil {
		create = s.refusal(c, rbac.ResourceProjects, rbac.ActionCreate, "*", "")
	}
	s.settingsPage(w, r, c, "projects", "Projects", s.projects(c), create, nil)
}

// apiProjects is GET /api/v1/projects.
func (s *server) apiProjects(w http.ResponseWriter, r *http.Request, c caller) {
	writeJSON(w, http.StatusOK, map[string]any{"items": s.projects(c), "readOnly": s.ns == nil})
}

// projectEdit is the body of a project's create (with Name) or update:
// the fields of Argo CD's project summary the portal changes.
type projectEdit struct {
	Name         string        `json:"name"`
	Description  string        `json:"description"`
	SourceRepos  []string      `json:"sourceRepos"`
	Destinations []destination `json:"destinations"`
}

// check refuses a destination without a server or a name, or with both,
// naming it.
func (e projectEdit) check() error {
	for i, d := range e.Destinations {
		if (d.Server == "") == (d.Name == "") {
			return badSetting("destinations[%d]: give a server or a cluster name (one of them)", i)
		}
	}
	for i, r := range e.SourceRepos {
		if strings.TrimSpace(r) == "" {
			return badSetting("sourceRepos[%d]: empty", i)
		}
	}
	return nil
}

// apply writes e into an AppProject's spec (an empty description is
// removed); the other fields stay as they are.
func (e projectEdit) apply(u *unstructured.Unstructured) error {
	if e.Description == "" {
		unstructured.RemoveNestedField(u.Object, "spec", "description")
	} else if err := unstructured.SetNestedField(u.Object, e.Description, "spec", "description"); err != nil {
		return err
	}
	repos := make([]any, len(e.SourceRepos))
	for i, r := range e.SourceRepos {
		repos[i] = r
	}
	dests := make([]any, len(e.Destinations))
	for i, d := range e.Destinations {
		m := map[string]any{"namespace": d.Namespace}
		if d.Server != "" {
			m["server"] = d.Server
		}
		if d.Name != "" {
			m["name"] = d.Name
		}
		dests[i] = m
	}
	if err := unstructured.SetNestedSlice(u.Object, repos, "spec", "sourceRepos"); err != nil {
		return err
	}
	return unstructured.SetNestedSlice(u.Object, dests, "spec", "destinations")
}

// apiCreateProject is POST /api/v1/projects: an AppProject, for a caller
// with "projects, create" on its name.
func (s *server) apiCreateProject(w http.ResponseWriter, r *http.Request, c caller) {
	var e projectEdit
	op := settingsOp{Action: "project.create", Resource: rbac.ResourceProjects}
	err := readSettingsBody(r, &e)
	if err == nil {
		op.Object, op.Project = e.Name, e.Name
		op.Details = map[string]any{"description": e.Description, "sourceRepos": e.SourceRepos, "destinations": e.Destinations}
		err = s.createProject(r, c, e)
	}
	s.finishSetting(w, c, op, map[string]string{"name": e.Name}, err)
}

func (s *server) createProject(r *http.Request, c caller, e projectEdit) error {
	if err := s.settingsWritable(); err != nil {
		return err
	}
	if errs := validation.IsDNS1123Subdomain(e.Name); len(errs) > 0 {
		return badSetting("name %q: %s", e.Name, strings.Join(errs, "; "))
	}
	if err := e.check(); err != nil {
		return err
	}
	if err := s.settingsAllowed(c, rbac.ResourceProjects, rbac.ActionCreate, e.Name, ""); err != nil {
		return err
	}
	u := newAppProject()
	u.SetNamespace(s.ns.ns)
	u.SetName(e.Name)
	if err := e.apply(u); err != nil {
		return err
	}
	if _, err := validateProject(u); err != nil {
		return err
	}
	ctx, cancel := settingsContext(r)
	defer cancel()
	if err := s.ns.cl.Create(ctx, u); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return &settingsError{code: http.StatusConflict, msg: fmt.Sprintf("AppProject %s: already exists", e.Name)}
		}
		return fmt.Errorf("AppProject %s: %w", e.Name, err)
	}
	return s.ns.waitProject(ctx, e.Name, u.GetResourceVersion())
}

// appProject reads AppProject name of the namespace from the API server
// (404 when there is none).
func (s *server) appProject(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	u := newAppProject()
	if err := s.ns.cl.Get(ctx, client.ObjectKey{Namespace: s.ns.ns, Name: name}, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &settingsError{code: http.StatusNotFound, msg: fmt.Sprintf("AppProject %s: not found", name)}
		}
		return nil, fmt.Errorf("AppProject %s: %w", name, err)
	}
	return u, nil
}

// apiUpdateProject is POST /api/v1/projects/{id}/update: the project's
// description, source repositories and destinations, for a caller with
// "projects, update" on it and, as Argo CD asks, "repositories, update"
// on each repository added and "clusters, update" on each destination
// cluster added.
func (s *server) apiUpdateProject(w http.ResponseWriter, r *http.Request, c caller) {
	var e projectEdit
	name := r.PathValue("id")
	op := settingsOp{Action: "project.update", Resource: rbac.ResourceProjects, Object: name, Project: name}
	err := readSettingsBody(r, &e)
	if err == nil {
		op.Details = map[string]any{"description": e.Description, "sourceRepos": e.SourceRepos, "destinations": e.Destinations}
		err = s.updateProject(r, c, name, e)
	}
	s.finishSetting(w, c, op, map[string]string{"name": name}, err)
}

func (s *server) updateProject(r *http.Request, c caller, name string, e projectEdit) error {
	if err := s.settingsWritable(); err != nil {
		return err
	}
	if e.Name != "" && e.Name != name {
		return badSetting("name: a project's name does not change")
	}
	if err := e.check(); err != nil {
		return err
	}
	if err := s.settingsAllowed(c, rbac.ResourceProjects, rbac.ActionUpdate, name, ""); err != nil {
		return err
	}
	ctx, cancel := settingsContext(r)
	defer cancel()
	var rv string
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := s.appProject(ctx, name)
		if err != nil {
			return err
		}
		prevRepos, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "sourceRepos")
		for _, repo := range newEntries(e.SourceRepos, prevRepos) {
			if err := s.settingsAllowed(c, rbac.ResourceRepositories, rbac.ActionUpdate, repo, repo); err != nil {
				return err
			}
		}
		prevDests, _, _ := unstructured.NestedSlice(u.Object, "spec", "destinations")
		var prev []destination
		for _, d := range prevDests {
			m, _ := d.(map[string]any)
			server, _ := m["server"].(string)
			cname, _ := m["name"].(string)
			prev = append(prev, destination{Server: server, Name: cname})
		}
		for _, cl := range newEntries(destinationClusters(e.Destinations), destinationClusters(prev)) {
			if err := s.settingsAllowed(c, rbac.ResourceClusters, rbac.ActionUpdate, cl, ""); err != nil {
				return err
			}
		}
		// A project that does not load now may be mended: its apps are
		// refused already.
		before, beforeErr := validateProject(u)
		if err := e.apply(u); err != nil {
			return err
		}
		after, err := validateProject(u)
		if err != nil {
			return err
		}
		if beforeErr == nil {
			if err := s.invalidatedApps(before, after); err != nil {
				return err
			}
		}
		if err := s.ns.cl.Update(ctx, u); err != nil {
			return err
		}
		rv = u.GetResourceVersion()
		return nil
	})
	if err != nil {
		if _, ok := err.(*settingsError); ok {
			return err
		}
		return fmt.Errorf("AppProject %s: %w", name, err)
	}
	return s.ns.waitProject(ctx, name, rv)
}

// apiDeleteProject is POST /api/v1/projects/{id}/delete: deletes an
// AppProject no app uses, for a caller with "projects, delete" on it;
// default is never deleted (as in Argo CD).
func (s *server) apiDeleteProject(w http.ResponseWriter, r *http.Request, c caller) {
	name := r.PathValue("id")
	op := settingsOp{Action: "project.delete", Resource: rbac.ResourceProjects, Object: name, Project: name}
	s.finishSetting(w, c, op, map[string]string{"name": name}, s.deleteProject(r, c, name))
}

func (s *server) deleteProject(r *http.Request, c caller, name string) error {
	if err := s.settingsWritable(); err != nil {
		return err
	}
	if name == defaultProject {
		return badSetting("AppProject %s: the name is reserved and cannot be deleted", name)
	}
	if err := s.settingsAllowed(c, rbac.ResourceProjects, rbac.ActionDelete, name, ""); err != nil {
		return err
	}
	n := 0
	for _, app := range s.appNames() {
		if a, ok := s.app(app); ok && projectOf(a) == name {
			n++
		}
	}
	if n > 0 {
		return &settingsError{code: http.StatusConflict, msg: fmt.Sprintf("AppProject %s: project is referenced by %d applications", name, n)}
	}
	ctx, cancel := settingsContext(r)
	defer cancel()
	u, err := s.appProject(ctx, name)
	if err != nil {
		return err
	}
	uid := u.GetUID()
	if err := s.ns.cl.Delete(ctx, u, &client.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil {
		return fmt.Errorf("AppProject %s: %w", name, err)
	}
	return s.ns.waitProject(ctx, name, "")
}

// waitProject waits until the portal's projects hold AppProject name at
// resourceVersion rv ("": until it is gone), so that the page read next
// shows the write.
func (b *nsBackend) waitProject(ctx context.Context, name, rv string) error {
	return b.waitCached(ctx, func() (string, bool, error) {
		u := newAppProject()
		err := b.cache.Get(ctx, client.ObjectKey{Namespace: b.ns, Name: name}, u)
		if apierrors.IsNotFound(err) {
			v := b.projectsVersion(name)
			return v, v != "", nil
		}
		if err != nil || u.GetResourceVersion() != rv {
			return u.GetResourceVersion(), true, err
		}
		// The cache has it: wait for the portal's projects too (the
		// informer's handler reloads them).
		return b.projectsVersion(name), true, nil
	}, rv)
}

// projectsVersion is the resourceVersion of project name in the
// portal's projects as last loaded ("" when it is not there).
func (b *nsBackend) projectsVersion(name string) string {
	ps := b.projects.Load()
	if ps == nil {
		return ""
	}
	for i := range ps.loaded {
		if ps.loaded[i].Name == name {
			return ps.loaded[i].ResourceVersion
		}
	}
	return ""
}

// defaultProject is Argo CD's default project: never deleted.
const defaultProject = "default"
