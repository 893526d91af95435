package controller

import (
	"slices"

	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/source"
)

// hint is the Runner's Engine.Apps().OnHint subscriber: it generates at once the
// sets whose git generators read repoURL (URL spelling ignored). It does
// not block: each set's hint channel holds one wake-up.
func (r *Runner) hint(repoURL string) {
	key := source.RepositoryKey(repoURL)
	invalidated := false
	for _, st := range r.sets {
		if slices.ContainsFunc(appset.GitRepos(st.set.Spec.Generators), func(u string) bool { return source.RepositoryKey(u) == key }) {
			if !invalidated {
				// The resolve cache must not answer with the commit
				// before the push.
				r.eng.Apps().Invalidate(repoURL)
				invalidated = true
			}
			select {
			case st.hint <- struct{}{}:
			default:
			}
		}
	}
}
