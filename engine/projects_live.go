package engine

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/project"
)

// MissingProjectError is the error of an Application naming a project
// the engine does not have. Its message is Argo CD's; a refresh reports it
// as an InvalidSpecError condition and nothing is compared or synced.
type MissingProjectError struct {
	// Project is the name the Application gives.
	Project string
}

// Error implements error.
func (e *MissingProjectError) Error() string {
	return fmt.Sprintf("Application referencing project %s which does not exist", e.Project)
}

// RefusedProjectError is the error of an Application whose project the
// host has but could not use (SetProjects' refused: a field the engine
// does not implement, an invalid sync window, ...). A refresh reports it
// as an InvalidSpecError condition and nothing is compared or synced.
type RefusedProjectError struct {
	// Project is the project's name.
	Project string
	// Err says why it was refused.
	Err error
}

// Error implements error.
func (e *RefusedProjectError) Error() string {
	return fmt.Sprintf("project %s cannot be used: %v", e.Project, e.Err)
}

// Unwrap returns the reason.
func (e *RefusedProjectError) Unwrap() error { return e.Err }

func newProjectSet(projects []Project) *projectSet {
	s := &projectSet{byName: map[string]*Project{}, refused: map[string]error{}}
	for i := range projects {
		p := projects[i]
		s.byName[p.Name] = &p
	}
	return s
}

// implicitDefault is the project an app of "default" gets when the host
// has none of that name: it allows everything.
func implicitDefault() *Project {
	return &Project{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: ProjectSpec{
		SourceRepos:              []string{"*"},
		Destinations:             []ApplicationDestination{{Server: "*", Name: "*", Namespace: "*"}},
		ClusterResourceWhitelist: []v1alpha1.ClusterResourceRestrictionItem{{Group: "*", Kind: "*"}},
		// The implicit default project (the host configured none)
		// serves Applications of every namespace; a configured one
		// follows Argo CD's rules.
		SourceNamespaces: []string{"*"},
	}}
}

// Project returns the project of that name ("" is "default"): the host's
// (Options.Projects, or the last SetProjects), or, when the host has no
// project named "default", an implicit "default" that allows everything.
// The error is a *MissingProjectError or a *RefusedProjectError. The
// project returned is the engine's: do not modify it.
func (set Settings) Project(name string) (*Project, error) {
	e := set.e

	if name == "" {
		name = "default"
	}
	e.projects.mu.RLock()
	defer e.projects.mu.RUnlock()
	if err, ok := e.projects.refused[name]; ok {
		return nil, &RefusedProjectError{Project: name, Err: err}
	}
	if p, ok := e.projects.byName[name]; ok {
		return p, nil
	}
	if name == "default" {
		return implicitDefault(), nil
	}
	return nil, &MissingProjectError{Project: name}
}

// project returns the app's project (Project) as Argo CD evaluates it:
// with the implicit destinations of the clusters scoped to it
// (project.WithScopedClusters).
func (e *Engine) project(app *Application) (*Project, error) {
	p, err := e.Settings().Project(app.Spec.Project)
	if err != nil {
		return nil, err
	}
	return project.WithScopedClusters(p, e.scopedClusters(p.Name)), nil
}

// scopedClusters are the clusters scoped to the project name (a cluster
// Secret's project), sorted by name.
func (e *Engine) scopedClusters(name string) []project.ScopedCluster {
	var out []project.ScopedCluster
	for _, cs := range e.clusters.All() {
		if c := cs.Config(); c.Project == name {
			out = append(out, project.ScopedCluster{Name: c.Name, Server: c.Server, Namespaces: c.Namespaces})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name+out[i].Server < out[j].Name+out[j].Server })
	return out
}

// SetProjects replaces the engine's projects (Options.Projects) with
// projects, for a host whose projects change while it runs (AppProject
// resources). refused names the projects the host has but could not read,
// and why: apps of them fail with a *RefusedProjectError instead of a
// *MissingProjectError. A project that fails Validate is refused too. As
// with Options.Projects, without a project named "default" the implicit
// one serves apps of "default".
//
// It returns the names of the projects that appeared, changed, went or
// were refused, sorted; while Run runs, the apps of those projects are
// refreshed at once. A host reconciling apps itself (Refresh) refreshes
// them.
func (set Settings) SetProjects(projects []Project, refused map[string]error) []string {
	e := set.e

	next := newProjectSet(nil)
	for name, err := range refused {
		next.refused[name] = err
	}
	for i := range projects {
		p := projects[i]
		if _, ok := next.refused[p.Name]; ok {
			continue
		}
		if err := p.Validate(); err != nil {
			next.refused[p.Name] = err
			continue
		}
		next.byName[p.Name] = &p
	}
	e.projects.mu.Lock()
	changed := changedProjects(e.projects, next)
	e.projects.byName, e.projects.refused = next.byName, next.refused
	e.projects.mu.Unlock()
	if len(changed) > 0 {
		e.requeueProjects(changed)
	}
	return changed
}

// changedProjects lists the names whose project or refusal differs
// between prev and next.
func changedProjects(prev, next *projectSet) []string {
	names := map[string]bool{}
	for _, s := range []*projectSet{prev, next} {
		for n := range s.byName {
			names[n] = true
		}
		for n := range s.refused {
			names[n] = true
		}
	}
	var out []string
	for n := range names {
		a, b := prev.byName[n], next.byName[n]
		ea, eb := prev.refused[n], next.refused[n]
		switch {
		case (a == nil) != (b == nil), (ea == nil) != (eb == nil):
			out = append(out, n)
		case ea != nil && ea.Error() != eb.Error():
			out = append(out, n)
		case a != nil && !reflect.DeepEqual(a.Spec, b.Spec):
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// requeueProjects queues for a refresh the apps Run runs that name one of
// the projects.
func (e *Engine) requeueProjects(names []string) {
	e.mu.Lock()
	r := e.runner
	e.mu.Unlock()
	if r == nil {
		return
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, st := range r.apps {
		name := st.app.Spec.Project
		if name == "" {
			name = "default"
		}
		if want[name] {
			r.queue.Add(key)
		}
	}
}

// projectFingerprint is what of the app's project a refresh's comparison
// depends on, for the refresh memo: a project that changes (SetProjects)
// makes the next refresh compare again.
func (e *Engine) projectFingerprint(app *Application) []byte {
	p, err := e.project(app)
	if err != nil {
		return nil
	}
	data, err := json.Marshal(p.Spec)
	if err != nil {
		return nil
	}
	return data
}
