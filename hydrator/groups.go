package hydrator

import (
	"slices"
	"strings"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// GroupKey is what apps hydrated in one commit share, as Argo CD batches
// them: the dry repository and revision, and the repository and branch
// hydrated to.
type GroupKey struct {
	// DryRepoURL and DryRevision are the dry source's repository and revision.
	DryRepoURL, DryRevision string
	// RepoURL and Branch are the repository and branch hydrated to.
	RepoURL, Branch string
}

// KeyOf returns the group of an app with a source hydrator.
func KeyOf(app *v1alpha1.Application) GroupKey {
	sh := app.Spec.SourceHydrator
	to := sh.GetHydrateToSource()
	return GroupKey{DryRepoURL: sameRepo(sh.DrySource.RepoURL), DryRevision: sh.DrySource.TargetRevision,
		RepoURL: sameRepo(to.RepoURL), Branch: to.TargetRevision}
}

// Groups returns the apps with a source hydrator, grouped by GroupKey:
// groups in the order of their keys, apps in the order of their AppKeys.
// Apps without one are left out.
func Groups(apps []*v1alpha1.Application) [][]*v1alpha1.Application {
	by := map[GroupKey][]*v1alpha1.Application{}
	var keys []GroupKey
	for _, a := range apps {
		if a.Spec.SourceHydrator == nil {
			continue
		}
		k := KeyOf(a)
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], a)
	}
	slices.SortFunc(keys, func(a, b GroupKey) int {
		return strings.Compare(a.DryRepoURL+"\x00"+a.DryRevision+"\x00"+a.RepoURL+"\x00"+a.Branch,
			b.DryRepoURL+"\x00"+b.DryRevision+"\x00"+b.RepoURL+"\x00"+b.Branch)
	})
	out := make([][]*v1alpha1.Application, 0, len(keys))
	for _, k := range keys {
		g := by[k]
		slices.SortFunc(g, func(a, b *v1alpha1.Application) int { return v1alpha1.KeyOf(a).Compare(v1alpha1.KeyOf(b)) })
		out = append(out, g)
	}
	return out
}
