package main

import (
	"net/http"
	"slices"
	"strings"

	"github.com/kubegitops/gitops/rbac"
)

// appDiffRow is one changed object of the app-wide diff.
type appDiffRow struct {
	Key  string `json:"key"`
	Sync string `json:"sync"`
	// Diff is the engine's unified diff of the live object against what a
	// sync would make of it (Secret values masked by the engine's differ,
	// whatever the caller's role).
	Diff string `json:"diff,omitempty"`
	// RequiresPruning: the object is no longer in Git and a sync with
	// prune deletes it.
	RequiresPruning bool `json:"requiresPruning,omitempty"`
}

// apiAppDiff answers every changed object of the app in one list, from the
// engine's status (its per-resource diffs), sorted by key: an object with
// a diff, and one that requires pruning.
func (s *server) apiAppDiff(w http.ResponseWriter, r *http.Request, c caller) {
	a, _, err := s.appFor(r, c, rbac.ResourceApplications, rbac.ActionGet)
	if err != nil {
		deny(w, err)
		return
	}
	st := s.diffStatus(r.Context(), a)
	out := []appDiffRow{}
	for _, rs := range st.Resources {
		if rs.Hook || (rs.Diff == "" && !rs.RequiresPruning) {
			continue
		}
		out = append(out, appDiffRow{Key: rs.Key.String(), Sync: string(rs.Status), Diff: rs.Diff, RequiresPruning: rs.RequiresPruning})
	}
	slices.SortFunc(out, func(x, y appDiffRow) int { return strings.Compare(x.Key, y.Key) })
	writeJSON(w, http.StatusOK, out)
}
