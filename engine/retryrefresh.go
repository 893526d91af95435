package engine

import (
	"context"

	"github.com/kubegitops/gitops/engine/internal/desired"
	"github.com/kubegitops/gitops/sync"
)

// refreshRetry prepares a retry under Argo CD's retry.refresh: the app's
// sources are resolved again at their targetRevisions (their cached refs
// dropped, and the operation's pinned revisions too, as Argo CD drops
// them), rendered, and checked against the project's source integrity as
// the first attempt was. It returns prev with the new objects and
// revision, and what was rendered.
func (e *Engine) refreshRetry(ctx context.Context, app *Application, proj *Project, cs *clusterState, prev sync.Request) (sync.Request, desired.Desired, error) {
	for _, src := range app.Spec.AllSources() {
		e.Invalidate(src.RepoURL)
	}
	d, err := e.render(ctx, app, cs, nil, false)
	if err != nil {
		return prev, desired.Desired{}, err
	}
	if err := e.verifySources(ctx, app, proj, d.Revisions, false); err != nil {
		return prev, desired.Desired{}, err
	}
	e.opts.Log.Info("retrying the sync with the latest revisions", "app", e.instanceOf(app), "from", prev.Revision, "revision", d.Revision())
	prev.Revision = d.Revision()
	prev.Desired = e.withoutChildApplications(d.Objects)
	return prev, d, nil
}
