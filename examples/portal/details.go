package main

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/rbac"
)

// sourceDetails is one source of an app as the details view shows it.
type sourceDetails struct {
	RepoURL        string                               `json:"repoURL"`
	Path           string                               `json:"path,omitempty"`
	Chart          string                               `json:"chart,omitempty"`
	TargetRevision string                               `json:"targetRevision,omitempty"`
	Helm           *v1alpha1.ApplicationSourceHelm      `json:"helm,omitempty"`
	Kustomize      *v1alpha1.ApplicationSourceKustomize `json:"kustomize,omitempty"`
}

// detailsView is the app details panel: its sources with their Helm and
// Kustomize settings, and its sync policy.
type detailsView struct {
	Sources     []sourceDetails `json:"sources"`
	Automated   bool            `json:"automated"`
	Prune       bool            `json:"prune"`
	SelfHeal    bool            `json:"selfHeal"`
	SyncOptions []string        `json:"syncOptions"`
	// CanUpdate: the caller may edit ("applications, update").
	CanUpdate bool `json:"canUpdate"`
}

func detailsOf(a *gitops.Application, canUpdate bool) detailsView {
	v := detailsView{Sources: []sourceDetails{}, SyncOptions: []string{}, CanUpdate: canUpdate}
	for _, s := range a.Spec.AllSources() {
		v.Sources = append(v.Sources, sourceDetails{RepoURL: s.RepoURL, Path: s.Path, Chart: s.Chart,
			TargetRevision: s.TargetRevision, Helm: s.Helm, Kustomize: s.Kustomize})
	}
	if sp := a.Spec.SyncPolicy; sp != nil {
		v.SyncOptions = append(v.SyncOptions, sp.SyncOptions...)
		if am := sp.Automated; am != nil && (am.Enabled == nil || *am.Enabled) {
			v.Automated, v.Prune, v.SelfHeal = true, am.Prune, am.SelfHeal
		}
	}
	return v
}

// canUpdate reports whether c may edit a.
func (s *server) canUpdate(c caller, a *gitops.Application) bool {
	return s.opts.Authz.allow(c.identity, rbac.ResourceApplications, rbac.ActionUpdate, appObject(a))
}

func (s *server) apiDetails(w http.ResponseWriter, r *http.Request, c caller) {
	a, _, err := s.appFor(r, c, rbac.ResourceApplications, rbac.ActionGet)
	if err != nil {
		deny(w, err)
		return
	}
	writeJSON(w, http.StatusOK, detailsOf(a, s.canUpdate(c, a)))
}

// detailsEdit changes an app's sync policy and its first source's Helm
// parameters and values or Kustomize images; a field left out is kept.
type detailsEdit struct {
	Automated       *bool                     `json:"automated,omitempty"`
	Prune           *bool                     `json:"prune,omitempty"`
	SelfHeal        *bool                     `json:"selfHeal,omitempty"`
	SyncOptions     *[]string                 `json:"syncOptions,omitempty"`
	HelmParameters  *[]v1alpha1.HelmParameter `json:"helmParameters,omitempty"`
	HelmValues      *string                   `json:"helmValues,omitempty"`
	KustomizeImages *[]string                 `json:"kustomizeImages,omitempty"`
}

// changed names the fields an edit sets, for the audit log (Helm values
// may hold secrets: their text is never logged).
func (e detailsEdit) changed() map[string]any {
	d := map[string]any{}
	if e.Automated != nil {
		d["automated"] = *e.Automated
	}
	if e.Prune != nil {
		d["prune"] = *e.Prune
	}
	if e.SelfHeal != nil {
		d["selfHeal"] = *e.SelfHeal
	}
	if e.SyncOptions != nil {
		d["syncOptions"] = *e.SyncOptions
	}
	if e.HelmParameters != nil {
		names := []string{}
		for _, p := range *e.HelmParameters {
			names = append(names, p.Name)
		}
		d["helmParameters"] = names
	}
	if e.HelmValues != nil {
		d["helmValues"] = "changed"
	}
	if e.KustomizeImages != nil {
		d["kustomizeImages"] = *e.KustomizeImages
	}
	return d
}

// apply returns a copy of a with e applied, or an error naming the field
// that does not fit a's first source; detected is that source's type as
// its files say (sourceTreeOf), "" when not read.
func (e detailsEdit) apply(a *gitops.Application, detected string) (*gitops.Application, error) {
	n := a.DeepCopy()
	if e.Automated != nil || e.Prune != nil || e.SelfHeal != nil || e.SyncOptions != nil {
		if n.Spec.SyncPolicy == nil {
			n.Spec.SyncPolicy = &v1alpha1.SyncPolicy{}
		}
		sp := n.Spec.SyncPolicy
		on := sp.Automated != nil && (sp.Automated.Enabled == nil || *sp.Automated.Enabled)
		if e.Automated != nil {
			on = *e.Automated
		}
		switch {
		case !on && (e.Prune != nil || e.SelfHeal != nil):
			return nil, fmt.Errorf("prune and selfHeal: they belong to automated sync, which is off")
		case !on:
			sp.Automated = nil
		default:
			if sp.Automated == nil || sp.Automated.Enabled != nil {
				sp.Automated = &v1alpha1.SyncPolicyAutomated{}
			}
			if e.Prune != nil {
				sp.Automated.Prune = *e.Prune
			}
			if e.SelfHeal != nil {
				sp.Automated.SelfHeal = *e.SelfHeal
			}
		}
		if e.SyncOptions != nil {
			sp.SyncOptions = slices.Clone(*e.SyncOptions)
		}
	}
	if e.HelmParameters == nil && e.HelmValues == nil && e.KustomizeImages == nil {
		return n, nil
	}
	src := n.Spec.Source
	if len(n.Spec.Sources) > 0 {
		src = &n.Spec.Sources[0]
	}
	if src == nil {
		return nil, fmt.Errorf("application %s has no source to edit", a.Name)
	}
	return n, editSource(src, e, detected)
}

// editSource sets the Helm and Kustomize fields of e on src: Helm fields
// need a Helm source (a chart, a helm block, or a folder detected as a
// chart), Kustomize images a Kustomize source (a kustomize block, or a
// folder detected as an overlay), so that an edit never lands where the
// renderer ignores it. The block is added when the source had none, as
// Argo CD's UI adds it.
func editSource(src *v1alpha1.ApplicationSource, e detailsEdit, detected string) error {
	if e.HelmParameters != nil || e.HelmValues != nil {
		if src.Chart == "" && src.Helm == nil && detected != sourceHelm {
			return fmt.Errorf("helmParameters and helmValues: source %s is not a Helm source (no chart, no helm block, %s)", src.RepoURL, detectedAs(detected))
		}
		if src.Helm == nil {
			src.Helm = &v1alpha1.ApplicationSourceHelm{}
		}
		if e.HelmParameters != nil {
			src.Helm.Parameters = slices.Clone(*e.HelmParameters)
		}
		if e.HelmValues != nil {
			src.Helm.Values = *e.HelmValues
		}
	}
	if e.KustomizeImages != nil {
		if src.Kustomize == nil && detected != sourceKustomize {
			return fmt.Errorf("kustomizeImages: source %s is not a Kustomize source (no kustomize block, %s)", src.RepoURL, detectedAs(detected))
		}
		if src.Kustomize == nil {
			src.Kustomize = &v1alpha1.ApplicationSourceKustomize{}
		}
		src.Kustomize.Images = slices.Clone(*e.KustomizeImages)
	}
	return nil
}

// apiEditDetails applies a detailsEdit through the engine (Engine.Apps().Upsert,
// which validates the app first) and keeps the edited app for the
// portal's later requests; it needs "applications, update" (403) and is
// audited, refused or done. The edit is written to the app's file of the
// --apps folder first (writeEdit): one that cannot be written is not made.
func (s *server) apiEditDetails(w http.ResponseWriter, r *http.Request, c caller) {
	a, _, err := s.appFor(r, c, rbac.ResourceApplications, rbac.ActionUpdate)
	if err != nil {
		s.denyChange(w, r, c, err)
		return
	}
	var body detailsEdit
	if !readBody(w, r, &body) {
		return
	}
	detected := s.detectedType(r.Context(), a, body)
	if s.ns != nil {
		s.editInNamespace(w, r, c, a, body, detected)
		return
	}
	s.appsMu.Lock()
	defer s.appsMu.Unlock()
	cur, ok := s.apps.byName[a.Name] // the latest, under the lock: two edits do not lose one another
	if !ok {
		apiError(w, http.StatusNotFound, fmt.Sprintf("application %s: deleted", a.Name))
		return
	}
	n, err := body.apply(cur, detected)
	if err == nil {
		err = n.Validate()
	}
	if err != nil {
		s.audit.write(c.identity, "details", cur, body.changed(), "error: "+err.Error())
		apiError(w, http.StatusBadRequest, fmt.Sprintf("application %s: %v", a.Name, err))
		return
	}
	if err := s.writeEdit(cur, n); err != nil {
		s.audit.write(c.identity, "details", cur, body.changed(), "error: "+err.Error())
		apiError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if err := s.opts.Engine.Apps().Upsert(*n); err != nil {
		_ = s.writeEdit(n, cur) // the file back as it was
		s.audit.write(c.identity, "details", cur, body.changed(), "error: "+err.Error())
		apiError(w, http.StatusBadRequest, fmt.Sprintf("application %s: %v", a.Name, err))
		return
	}
	s.apps.byName[a.Name] = n // replaced whole, never changed in place
	s.audit.write(c.identity, "details", n, body.changed(), "done")
	writeJSON(w, http.StatusOK, detailsOf(n, true))
}
