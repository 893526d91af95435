package preview

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/project"
	"github.com/kubegitops/gitops/resource"
)

// gitTimeout bounds one resolve made outside a caller's context.
const gitTimeout = time.Minute

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

// AppStatus is what the change does to one app.
type AppStatus string

// The statuses of an app in a report.
const (
	// AppChanged: the app's objects differ between base and head.
	AppChanged AppStatus = "changed"
	// AppAdded: the app exists at head only (a new file, an
	// ApplicationSet or a parent app that now generates it).
	AppAdded AppStatus = "added"
	// AppRemoved: the app exists at base only.
	AppRemoved AppStatus = "removed"
	// AppFailed: the app's head render failed, or a policy refused one of
	// its objects.
	AppFailed AppStatus = "failed"
)

// AppReport is one app the change affects.
type AppReport struct {
	// Name is namespace/name, or the name of an app without a namespace.
	Name string `json:"name"`
	// Origin says where the app is defined at head (at base for a removed
	// app): "file PATH", "ApplicationSet NAME" or "app PARENT".
	Origin string `json:"origin"`
	// Status says what the change does to the application.
	Status AppStatus `json:"status"`
	// Reason says why the app was rendered again at head: the first
	// changed path its base render read, a spec change, or a new app.
	Reason string `json:"reason,omitempty"`
	// Objects are the objects added, removed or changed at head.
	Objects []ObjectChange `json:"objects,omitempty"`
	// Error is the head render's error.
	Error string `json:"error,omitempty"`
	// Policy lists the refusals of the project's rules and the policies,
	// each naming the rule and the object.
	Policy []string `json:"policy,omitempty"`
	// Notes are warnings: a base render that failed, project rules that
	// could not be checked.
	Notes []string `json:"notes,omitempty"`
	// Live is the comparison of the head render with the cluster, when
	// asked for.
	Live *LiveReport `json:"live,omitempty"`
}

// LiveReport is what a sync of the head render would do on the cluster,
// as the engine's refresh computes it.
type LiveReport struct {
	// Sync is the app's sync status against the head render.
	Sync appstatus.SyncStatusCode `json:"sync"`
	// Objects are the objects a sync would create, change or prune.
	Objects []ObjectChange `json:"objects,omitempty"`
	// Error is a comparison that could not be made.
	Error string `json:"error,omitempty"`
}

// Renders counts the renders that ran, per side (cache hits and reused
// base renders are not renders).
type Renders struct {
	// Base counts the renders of the base revision.
	Base int `json:"base"`
	// Head counts the renders of the head revision.
	Head int `json:"head"`
}

// Report is the outcome of a preview.
type Report struct {
	// Base and Head are the commits compared.
	Base string `json:"base"`
	Head string `json:"head"`
	// ChangedPaths are the files that differ between the two trees.
	ChangedPaths []string `json:"changedPaths"`
	// Apps are the apps the change affects, by name.
	Apps []AppReport `json:"apps"`
	// Unchanged counts the apps whose head render equals their base one
	// (rendered again or not).
	Unchanged int `json:"unchanged"`
	// Renders counts the renders.
	Renders Renders `json:"renders"`
}

// ExitCode is the preview's exit status: 2 when an app failed (render
// error or policy refusal) or a live comparison could not be made, 1 when
// something changes, 0 when nothing does.
func (r Report) ExitCode() int {
	code := 0
	for _, a := range r.Apps {
		if a.Status == AppFailed || (a.Live != nil && a.Live.Error != "") {
			return 2
		}
		code = 1
	}
	return code
}

// report compares the two sides and runs the policy and live checks.
func (r *run) report(ctx context.Context, rep *Report, base, head *side, baseRes, headRes map[string]*result) error {
	projects := append(append([]gitops.Project{}, r.opts.Projects...), head.m.projects...)
	var live *liveComparer
	if r.opts.Live != nil {
		var err error
		if live, err = newLiveComparer(r.opts); err != nil {
			return err
		}
		defer live.close()
	}
	ids := make([]string, 0, len(baseRes)+len(headRes))
	for id := range headRes {
		ids = append(ids, id)
	}
	for id := range baseRes {
		if _, ok := headRes[id]; !ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		b, h := baseRes[id], headRes[id]
		if h == nil {
			objs, err := compareObjects(b.objs, nil, b.app.Spec.Destination.Namespace)
			if err != nil {
				return err
			}
			a := AppReport{Name: id, Origin: b.origin, Status: AppRemoved, Objects: objs}
			if b.err != nil {
				a.Notes = append(a.Notes, "base render failed: "+b.err.Error())
			}
			rep.Apps = append(rep.Apps, a)
			continue
		}
		a := AppReport{Name: id, Origin: h.origin, Reason: h.reason}
		if h.err != nil {
			a.Status, a.Error = AppFailed, h.err.Error()
			rep.Apps = append(rep.Apps, a)
			continue
		}
		if !h.rendered {
			rep.Unchanged++
			continue
		}
		var baseObjs = b.objsOrNil()
		if b != nil && b.err != nil {
			a.Notes = append(a.Notes, "base render failed: "+b.err.Error())
		}
		objs, err := compareObjects(baseObjs, h.objs, h.app.Spec.Destination.Namespace)
		if err != nil {
			return err
		}
		a.Objects = objs
		a.Status = AppChanged
		if b == nil {
			a.Status = AppAdded
		}
		a.Policy, a.Notes = r.checkPolicies(ctx, h, projects, a.Notes)
		if len(a.Policy) > 0 {
			a.Status = AppFailed
		}
		if live != nil {
			a.Live = live.compare(ctx, r, h, head.rev.Commit)
		}
		if len(objs) == 0 && b != nil && len(a.Policy) == 0 && len(a.Notes) == 0 && (a.Live == nil || len(a.Live.Objects) == 0 && a.Live.Error == "") {
			rep.Unchanged++
			continue
		}
		rep.Apps = append(rep.Apps, a)
	}
	return nil
}

func (res *result) objsOrNil() []*unstructured.Unstructured {
	if res == nil {
		return nil
	}
	return res.objs
}

// checkPolicies runs the app's project rules and the policies on every
// object of its head render (child Applications aside: the engine does
// not apply them). An app whose project is neither given nor the implicit
// default gets a note instead of the project's rules.
func (r *run) checkPolicies(ctx context.Context, h *result, projects []gitops.Project, notes []string) ([]string, []string) {
	name := h.app.Spec.Project
	if name == "" {
		name = "default"
	}
	var proj *gitops.Project
	for i := range projects {
		if projects[i].Name == name {
			proj = &projects[i]
		}
	}
	var refusals []string
	if proj == nil && name != "default" {
		notes = append(notes, fmt.Sprintf("project rules not checked: project %q is not given", name))
	}
	if proj != nil {
		if err := project.CheckApplication(proj, h.app); err != nil {
			refusals = append(refusals, err.Error())
		}
	}
	for _, obj := range h.objs {
		if obj.GetKind() == "Application" && obj.GroupVersionKind().Group == "argoproj.io" {
			continue
		}
		var err error
		if proj != nil {
			err = project.Admission(proj, h.app, r.opts.Policies...)(ctx, obj, !resource.BuiltinClusterScoped(obj.GetKind()), false)
		} else {
			for _, pol := range r.opts.Policies {
				if err = pol.Check(ctx, h.app, obj); err != nil {
					break
				}
			}
		}
		if err != nil {
			refusals = append(refusals, err.Error())
		}
	}
	return refusals, notes
}
