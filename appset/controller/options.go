package controller

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/go-logr/logr"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/source"
)

// Options configure a Runner. Start from DefaultOptions.
type Options struct {
	// Generate are the generators' options. A nil Repos reads through
	// the engine's own sources (with the engine's Credentials, so git
	// generators share the apps' resolve cache); a nil Validate checks
	// each generated Application with engine.LoadApplications; a nil
	// Clusters offers the engine's clusters (its Options.Clusters,
	// without labels). See GenerateOptions.
	Generate appset.Options
	// Interval is how often each set is generated again; 0: the engine's
	// Interval (its default when the engine's is off). A generator's
	// requeueAfterSeconds shortens it for its set; Engine.Apps().Hint of a
	// repository a git generator reads generates at once.
	Interval time.Duration
	// RolloutPoll is how often a RollingSync in progress, or a cascading
	// deletion, is looked at again. Default 500 ms.
	RolloutPoll time.Duration
	// ControllerNamespace is where clusterDecisionResource generators
	// read their ConfigMap and duck-typed resources (Argo CD's
	// namespace) when Generate.Decisions is nil: on the destination
	// https://kubernetes.default.svc. Default "argocd".
	ControllerNamespace string
	// Log receives what the runner does; the zero Logger: the engine's
	// Options.Log.
	Log logr.Logger
}

// DefaultOptions returns appset.DefaultOptions, a 500 ms rollout poll,
// the namespace "argocd" and the engine's interval.
func DefaultOptions() Options {
	return Options{Generate: appset.DefaultOptions(), RolloutPoll: 500 * time.Millisecond, ControllerNamespace: "argocd"}
}

// withDefaults fills what opts leaves zero from DefaultOptions and eng.
func withDefaults(eng *engine.Engine, opts Options) Options {
	eo := eng.Settings().Options()
	if opts.Interval <= 0 {
		opts.Interval = eo.Interval
	}
	if opts.Interval <= 0 {
		// The apps' periodic refreshes are off; sets still regenerate on
		// the default interval (and on hints).
		opts.Interval = engine.DefaultOptions().Interval
	}
	if opts.RolloutPoll <= 0 {
		opts.RolloutPoll = 500 * time.Millisecond
	}
	if opts.ControllerNamespace == "" {
		opts.ControllerNamespace = "argocd"
	}
	if opts.Log.GetSink() == nil {
		opts.Log = eo.Log
	}
	opts.Generate = GenerateOptions(eng, opts)
	return opts
}

// GenerateOptions returns opts.Generate with the fields left nil filled
// from the engine, as Run fills them, so that a host running
// appset.Runner itself (an operator writing Application resources) reads
// and checks as the runner does:
//   - Repos reads git generators' repositories through the engine's own
//     sources (Engine.Sources().Source) and its Options.Credentials, sharing the
//     resolve cache (and Invalidate) of its apps;
//   - Validate checks each generated Application as
//     engine.LoadApplications does;
//   - Clusters offers the engine's Options.Clusters (names and servers,
//     no labels);
//   - Decisions reads clusterDecisionResource resources in
//     opts.ControllerNamespace ("argocd" when empty) of the destination
//     https://kubernetes.default.svc, when the engine's Options.Clusters
//     has it.
func GenerateOptions(eng *engine.Engine, opts Options) appset.Options {
	g := opts.Generate
	eo := eng.Settings().Options()
	if g.Repos == nil {
		g.Repos = engineRepos{eng: eng, credentials: eo.Credentials}
	}
	if g.Validate == nil {
		g.Validate = validateGenerated
	}
	ns := opts.ControllerNamespace
	if ns == "" {
		ns = "argocd"
	}
	if g.Decisions == nil {
		for _, c := range eo.Clusters {
			if c.Server == v1alpha1.KubernetesInternalAPIServerAddr && c.Config != nil {
				if d, err := appset.NewClusterDecisions(c.Config, ns); err == nil {
					g.Decisions = d
				}
				break
			}
		}
	}
	if g.Clusters == nil {
		var cls appset.StaticClusters
		for _, c := range eo.Clusters {
			cls = append(cls, appset.Cluster{Name: c.Name, Server: c.Server})
		}
		g.Clusters = cls
	}
	return g
}

// validateGenerated checks a generated Application as LoadApplications
// checks a manifest.
func validateGenerated(obj map[string]any) error {
	js, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	_, err = engine.LoadApplications(bytes.NewReader(js))
	return err
}

// engineRepos reads git generators' repositories with the engine's
// sources and credentials.
type engineRepos struct {
	eng         *engine.Engine
	credentials func(repoURL string) *source.Credentials
}

// Snapshot implements appset.Repos.
func (r engineRepos) Snapshot(ctx context.Context, repoURL, revision string) (source.Snapshot, error) {
	s, err := r.eng.Sources().Source(repoURL)
	if err != nil {
		return nil, err
	}
	repo := source.Repository{URL: repoURL}
	if r.credentials != nil {
		repo.Credentials = r.credentials(repoURL)
	}
	return appset.SourceRepos{Source: s, Repository: func(string) (source.Repository, error) { return repo, nil }}.Snapshot(ctx, repoURL, revision)
}
