package preview

import (
	"context"
	"sort"
	"strings"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/source"
)

// liveComparer refreshes head renders against the live cluster through
// a connected engine.
type liveComparer struct {
	eng *gitops.Engine
}

func newLiveComparer(opts Options) (*liveComparer, error) {
	eo := gitops.DefaultOptions()
	eo.Log = opts.Log
	eo.Credentials = opts.Credentials
	eo.ChartSource = opts.ChartSource
	eo.Clusters = append([]gitops.ClusterConfig{}, opts.Live.Clusters...)
	if opts.Live.Config != nil {
		named := false
		for _, c := range eo.Clusters {
			named = named || c.Server == v1alpha1.KubernetesInternalAPIServerAddr || c.Name == v1alpha1.KubernetesInClusterName
		}
		if !named {
			eo.Clusters = append(eo.Clusters, gitops.ClusterConfig{Name: v1alpha1.KubernetesInClusterName, Server: v1alpha1.KubernetesInternalAPIServerAddr, Config: opts.Live.Config})
		}
	}
	others := &defaultSources{}
	eo.SourceFor = func(repoURL string) (source.Source, error) {
		if sameRepo(repoURL, opts.RepoURL) {
			return repoSource{Source: opts.Source, repo: opts.Repository}, nil
		}
		return others.get(repoURL)
	}
	e, err := gitops.New(eo)
	if err != nil {
		return nil, err
	}
	return &liveComparer{eng: e}, nil
}

func (l *liveComparer) close() { l.eng.Close() }

// compare refreshes the app at the head commit against its destination
// and lists what a sync would create, change or prune; an object no
// longer in Git that the sync would not prune is Removed and Kept.
func (l *liveComparer) compare(ctx context.Context, r *run, h *result, commit string) *LiveReport {
	app, _ := r.renderCopy(ctx, h.app, commit)
	app.Spec.Destination = h.app.Spec.Destination
	st, err := l.eng.Refresh(ctx, app)
	rep := &LiveReport{Sync: st.Sync}
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	prunes := syncPrunes(h.app)
	for _, row := range st.Resources {
		if row.Hook {
			continue
		}
		c := ObjectChange{Key: row.Key, Diff: row.Diff}
		switch {
		case row.RequiresPruning:
			c.Change = Removed
			switch {
			case row.PruneDisabled:
				c.Kept, c.Diff = true, "kept: its sync options disable or gate pruning\n"
			case !prunes:
				c.Kept, c.Diff = true, "left as an orphan: the app's sync does not prune (no automated sync with prune: true)\n"
			}
		case row.Status != appstatus.OutOfSync:
			continue
		case row.Health != nil && row.Health.Code == health.Missing:
			c.Change = Added
		default:
			c.Change = Changed
		}
		rep.Objects = append(rep.Objects, c)
	}
	sort.Slice(rep.Objects, func(i, j int) bool { return rep.Objects[i].Key.String() < rep.Objects[j].Key.String() })
	for _, cond := range st.Conditions {
		if cond.IsError() {
			rep.Error = strings.TrimSpace(rep.Error + "; " + cond.Message)
		}
	}
	rep.Error = strings.TrimPrefix(rep.Error, "; ")
	return rep
}

// syncPrunes reports whether a sync of app prunes: as in Argo CD, only an
// enabled automated sync with prune: true does (a manual sync prunes only
// when asked to, which a preview cannot know).
func syncPrunes(app *gitops.Application) bool {
	p := app.Spec.SyncPolicy
	return p != nil && p.Automated != nil && (p.Automated.Enabled == nil || *p.Automated.Enabled) && p.Automated.Prune
}
