package appsets

import (
	"context"
	"fmt"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appset"
	appsetwebhook "github.com/kubegitops/gitops/appset/webhook"
	"github.com/kubegitops/gitops/source"
	srcwebhook "github.com/kubegitops/gitops/source/webhook"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RefreshPullRequest sets AnnotationRefresh on every set whose
// pullRequest generator lists the event's repository (as Argo CD's
// webhook does), so it is generated again at once; it returns their
// names.
func (r *Reconciler) RefreshPullRequest(ctx context.Context, ev *appsetwebhook.PullRequestEvent) ([]string, error) {
	return r.refreshWhere(ctx, func(s *v1alpha1.ApplicationSet) bool { return ev.Refreshes(s.Spec.Generators) })
}

// RefreshPush sets AnnotationRefresh on every set whose git generators
// read the pushed repository.
func (r *Reconciler) RefreshPush(ctx context.Context, h srcwebhook.Hint) ([]string, error) {
	keys := map[string]bool{}
	for _, u := range h.RepositoryURLs {
		keys[source.RepositoryKey(u)] = true
	}
	return r.refreshWhere(ctx, func(s *v1alpha1.ApplicationSet) bool {
		for _, u := range appset.GitRepos(s.Spec.Generators) {
			if keys[source.RepositoryKey(u)] {
				return true
			}
		}
		return false
	})
}

func (r *Reconciler) refreshWhere(ctx context.Context, match func(*v1alpha1.ApplicationSet) bool) ([]string, error) {
	var sets v1alpha1.ApplicationSetList
	if err := r.client.List(ctx, &sets); err != nil {
		return nil, err
	}
	var out []string
	for i := range sets.Items {
		s := &sets.Items[i]
		if !match(s) {
			continue
		}
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"true"}}}`, AnnotationRefresh)
		if err := r.client.Patch(ctx, s, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return out, &Error{Set: keyOf(s), Err: fmt.Errorf("set %s: %w", AnnotationRefresh, err)}
		}
		out = append(out, keyOf(s))
	}
	return out, nil
}
