package controller

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	gosync "sync"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// appProjectGVK is the kind the project watch reads. AppProjects are read
// as unstructured objects so that a field the model lacks (one Argo CD
// adds later, under Argo CD's own CRD) is seen and refused by name rather
// than dropped by decoding.
var appProjectGVK = schema.GroupVersionKind{Group: v1alpha1.Group, Version: v1alpha1.Version, Kind: v1alpha1.AppProjectKind}

// Projects keeps an engine's projects (gitops.Engine.Settings().SetProjects) equal to
// the AppProjects of one namespace, as Argo CD reads them from its own
// namespace. A project that does not load (a field the engine does not
// implement, an invalid sync window) is refused by name: the apps naming
// it fail with the reason. A role's jwtTokens are kept and named once in
// an Event (ReasonUnusedField): they are an API server's business.
type Projects struct {
	// Engine receives the projects.
	Engine *gitops.Engine
	// Namespace holds the AppProjects.
	Namespace string
	// Reader lists them and the Applications of a changed project.
	// Default: the manager's cache (SetupWithManager of the reconcilers
	// given it); required without a manager.
	Reader client.Reader
	// Recorder, when set, receives the Event that names, once per
	// project and change, what of it the operator does not use itself
	// (ReasonUnusedField: a role's jwtTokens).
	Recorder record.EventRecorder

	// mu makes each Load list and set as one step, so that a Load that
	// listed earlier never overwrites the projects of a later one.
	mu gosync.Mutex
	// noted is what was last named of each project (by UID).
	noted map[types.UID]string
}

// ReasonUnusedField is the reason of the Normal Event naming a field of
// an AppProject that is another component's business: a role's jwtTokens,
// project tokens that Argo CD's API server issues and checks, which the
// operator keeps but neither issues nor checks.
const ReasonUnusedField = "UnusedField"

// Load lists the AppProjects and gives them to the engine; it returns the
// names of the projects that changed (gitops.Engine.Settings().SetProjects).
func (p *Projects) Load(ctx context.Context) ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.Engine == nil || p.Reader == nil {
		return nil, errors.New("controller: Projects needs an Engine and a Reader")
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(appProjectGVK.GroupVersion().WithKind(v1alpha1.AppProjectKind + "List"))
	if err := p.Reader.List(ctx, list, client.InNamespace(p.Namespace)); err != nil {
		return nil, fmt.Errorf("list AppProjects in %s: %w", p.Namespace, err)
	}
	var projects []gitops.Project
	refused := map[string]error{}
	for i := range list.Items {
		proj, err := decodeProject(&list.Items[i])
		if err != nil {
			refused[list.Items[i].GetName()] = err
			continue
		}
		p.noteUnused(&list.Items[i], &proj)
		projects = append(projects, proj)
	}
	return p.Engine.Settings().SetProjects(projects, refused), nil
}

// noteUnused names in an Event, once per project and change, the roles
// whose jwtTokens the operator keeps without using them.
func (p *Projects) noteUnused(obj *unstructured.Unstructured, proj *gitops.Project) {
	var roles []string
	for _, r := range proj.Spec.Roles {
		if len(r.JWTTokens) > 0 {
			roles = append(roles, fmt.Sprintf("%s (%d)", r.Name, len(r.JWTTokens)))
		}
	}
	note := ""
	if len(roles) > 0 {
		note = "spec.roles[].jwtTokens of role " + strings.Join(roles, ", ") +
			": project tokens are issued and checked by an API server (Argo CD's); this operator keeps them and neither issues nor checks them"
	}
	if p.noted == nil {
		p.noted = map[types.UID]string{}
	}
	if p.noted[obj.GetUID()] == note {
		return
	}
	p.noted[obj.GetUID()] = note
	if note != "" && p.Recorder != nil {
		p.Recorder.Event(obj, corev1.EventTypeNormal, ReasonUnusedField, note)
	}
}

// decodeProject reads one AppProject with the model's strict loader: a
// field the model refuses is an error naming it (wrapping
// v1alpha1.ErrUnsupported).
func decodeProject(u *unstructured.Unstructured) (gitops.Project, error) {
	id := u.GetNamespace() + "/" + u.GetName()
	data, err := json.Marshal(u.Object)
	if err != nil {
		return gitops.Project{}, fmt.Errorf("AppProject %s: %w", id, err)
	}
	ps, err := v1alpha1.LoadProjects(bytes.NewReader(data))
	if err != nil {
		return gitops.Project{}, projectLoadError(id, err)
	}
	if len(ps) != 1 {
		return gitops.Project{}, fmt.Errorf("AppProject %s: not one project", id)
	}
	return ps[0], nil
}

// projectLoadError names the project and each bad field, without the
// loader's document numbers (there is one document, made here).
func projectLoadError(id string, err error) error {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	out := make([]error, 0, len(errs))
	for _, e := range errs {
		var le *v1alpha1.LoadError
		var ve *v1alpha1.ValidationError
		switch {
		case errors.As(e, &ve):
			out = append(out, ve)
		case errors.As(e, &le) && le.Path != "":
			out = append(out, fmt.Errorf("AppProject %s: %s: %w", id, le.Path, le.Err))
		default:
			out = append(out, fmt.Errorf("AppProject %s: %w", id, e))
		}
	}
	return errors.Join(out...)
}

// projectHandler loads the projects on every AppProject event and queues
// the Applications of the project that changed, so that an app waiting
// for its project proceeds, and one whose rules changed is compared again.
func (r *Reconciler) projectHandler() handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		if _, err := r.opts.Projects.Load(ctx); err != nil {
			r.opts.Log.Error(err, "AppProjects not read")
		}
		apps := &v1alpha1.ApplicationList{}
		if err := r.opts.Projects.Reader.List(ctx, apps); err != nil {
			r.opts.Log.Error(err, "Applications of a changed project not listed", "project", obj.GetName())
			return nil
		}
		var out []reconcile.Request
		for _, a := range apps.Items {
			name := a.Spec.Project
			if name == "" {
				name = "default"
			}
			if name == obj.GetName() {
				out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: a.Namespace, Name: a.Name}})
			}
		}
		return out
	})
}

// NewAppProject is an empty AppProject as the project watch reads it
// (unstructured, so that fields the model lacks are seen), for a
// controller watching AppProjects beside Projects.
func NewAppProject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(appProjectGVK)
	return u
}
