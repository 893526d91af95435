package webhook

import (
	"context"

	"github.com/kubegitops/gitops/source"
)

// Refresh returns an OnPush that acts on a hint the usual way: it drops
// the cached refs of the repository in every invalidator (a git.Source)
// and makes the Poller poll it now. Every URL of the hint is tried, so the
// repository is found whichever form it was watched under. The hint's
// revision is not trusted: the poll resolves the ref itself.
func Refresh(p *source.Poller, invalidators ...source.Invalidator) func(context.Context, Hint) {
	return func(_ context.Context, h Hint) {
		for _, u := range h.RepositoryURLs {
			for _, inv := range invalidators {
				inv.Invalidate(source.Repository{URL: u})
			}
			if p != nil {
				p.Trigger(u)
			}
		}
	}
}
