package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/rbac"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// appSetView is one ApplicationSet as its page shows it, as Argo CD's UI
// shows one: its generators, the apps it generated (those the caller may
// get, linked), its conditions and its progressive sync's steps.
type appSetView struct {
	Name    string `json:"name"`
	Project string `json:"project"`
	// Generators are the generators' kinds (list, git, matrix, ...), in
	// order.
	Generators []string `json:"generators"`
	// Strategy is the rollout strategy's type ("" when all at once).
	Strategy   string               `json:"strategy,omitempty"`
	Apps       []string             `json:"apps"`
	Conditions []appSetConditionRow `json:"conditions"`
	// Steps are status.applicationStatus: each generated app's rollout
	// step and state, by step then name.
	Steps []appSetStepRow `json:"steps"`
	// Folder: the set is a file of the --apps folder, run by the portal.
	Folder bool `json:"folder,omitempty"`
	// NotRun says, for a set of the folder, each generator that cannot
	// run over a folder and why; such a set is not run.
	NotRun []string `json:"notRun,omitempty"`
	// CurrentStep is the RollingSync step in progress (1-based) of a set
	// the portal runs; 0 when none waits.
	CurrentStep int `json:"currentStep,omitempty"`
}

// appSetConditionRow is one status condition.
type appSetConditionRow struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// appSetStepRow is one app's place in a progressive sync.
type appSetStepRow struct {
	App     string `json:"application"`
	Step    string `json:"step"`
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

// appSetsPageData is the ApplicationSets page's body.
type appSetsPageData struct {
	// Served is false when the portal serves neither a namespace nor an
	// --apps folder: the page says so instead of showing an empty list.
	Served bool
	// Folder: the sets are the --apps folder's.
	Folder bool
	Sets   []appSetView
}

// appSetProject is the project of set's template, as written (Argo CD
// authorises a set by it, a template string included).
func appSetProject(set *v1alpha1.ApplicationSet) string {
	var spec struct {
		Project string `json:"project"`
	}
	_ = json.Unmarshal(set.Spec.Template.Spec, &spec) // a spec that does not read has no project
	return spec.Project
}

// appSetObject is an ApplicationSet's object in Argo CD's RBAC:
// "<project of its template>/<name>".
func appSetObject(set *v1alpha1.ApplicationSet) string {
	return rbac.AppObject(appSetProject(set), "", set.Name, "")
}

// appSets lists the namespace's ApplicationSets the caller may get
// ("applicationsets, get"), sorted by name; nil without a namespace.
func (s *server) appSets(ctx context.Context, c caller) ([]appSetView, error) {
	if s.folderSets != nil {
		return s.folderSets.views(s, c), nil
	}
	if s.ns == nil || !s.ns.appSets {
		return nil, nil
	}
	var list v1alpha1.ApplicationSetList
	if err := s.ns.cache.List(ctx, &list, client.InNamespace(s.ns.ns)); err != nil {
		return nil, fmt.Errorf("--namespace %s: list ApplicationSets: %w", s.ns.ns, err)
	}
	out := []appSetView{}
	for i := range list.Items {
		set := &list.Items[i]
		if !s.opts.Authz.allow(c.identity, rbac.ResourceApplicationSets, rbac.ActionGet, appSetObject(set)) {
			continue
		}
		out = append(out, s.appSetViewOf(c, set))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// appSetViewOf is set's view for c: only the generated apps c may get.
func (s *server) appSetViewOf(c caller, set *v1alpha1.ApplicationSet) appSetView {
	v := appSetView{Name: set.Name, Project: appSetProject(set), Generators: generatorKinds(set.Spec.Generators),
		Apps: []string{}, Conditions: []appSetConditionRow{}, Steps: []appSetStepRow{}}
	if st := set.Spec.Strategy; st != nil {
		v.Strategy = st.Type
	}
	for _, name := range s.appNames() {
		a, ok := s.app(name)
		if !ok || !s.opts.Authz.allow(c.identity, rbac.ResourceApplications, rbac.ActionGet, appObject(a)) {
			continue
		}
		for _, o := range a.OwnerReferences {
			if o.Kind == "ApplicationSet" && o.Name == set.Name {
				v.Apps = append(v.Apps, a.Name)
				break
			}
		}
	}
	for _, cd := range set.Status.Conditions {
		v.Conditions = append(v.Conditions, appSetConditionRow{Type: cd.Type, Status: cd.Status, Reason: cd.Reason, Message: cd.Message})
	}
	for _, as := range set.Status.ApplicationStatus {
		v.Steps = append(v.Steps, appSetStepRow{App: as.Application, Step: as.Step, Status: as.Status, Message: as.Message})
	}
	slices.SortStableFunc(v.Steps, func(a, b appSetStepRow) int {
		if a.Step != b.Step {
			if len(a.Step) != len(b.Step) { // "2" before "10"
				return len(a.Step) - len(b.Step)
			}
			if a.Step < b.Step {
				return -1
			}
			return 1
		}
		if a.App < b.App {
			return -1
		}
		return 1
	})
	return v
}

// generatorKinds names each generator by its field (list, git, matrix,
// ...), from its JSON form so that every kind the type knows is named.
func generatorKinds(gens []v1alpha1.ApplicationSetGenerator) []string {
	out := make([]string, 0, len(gens))
	for _, g := range gens {
		b, err := json.Marshal(g)
		var m map[string]json.RawMessage
		if err != nil || json.Unmarshal(b, &m) != nil {
			out = append(out, "unknown")
			continue
		}
		kinds := []string{}
		for k := range m {
			if k != "selector" && k != "values" {
				kinds = append(kinds, k)
			}
		}
		sort.Strings(kinds)
		if len(kinds) == 0 {
			kinds = append(kinds, "unknown")
		}
		out = append(out, kinds...)
	}
	return out
}

// appSetsPage is GET /applicationsets: the ApplicationSets the caller may
// get.
func (s *server) appSetsPage(w http.ResponseWriter, r *http.Request, c caller) {
	sets, err := s.appSets(r.Context(), c)
	if err != nil {
		s.render(w, http.StatusInternalServerError, "error.html", s.page(c, "ApplicationSets", err.Error()))
		return
	}
	s.render(w, http.StatusOK, "appsets.html", s.page(c, "ApplicationSets", appSetsPageData{Served: s.folderSets != nil || s.ns != nil && s.ns.appSets,
		Folder: s.folderSets != nil, Sets: sets}))
}

// apiAppSets is GET /api/v1/applicationsets: the same, as JSON.
func (s *server) apiAppSets(w http.ResponseWriter, r *http.Request, c caller) {
	sets, err := s.appSets(r.Context(), c)
	if err != nil {
		apiError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if sets == nil {
		sets = []appSetView{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": sets})
}
