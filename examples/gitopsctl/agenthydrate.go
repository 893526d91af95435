package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/argocdcm"
	"github.com/kubegitops/gitops/hydrator"
	gitsrc "github.com/kubegitops/gitops/source/git"
	"github.com/kubegitops/gitops/source/repocreds"
)

// agentHydrations is Argo CD's source hydrator inside the agent, on with
// --hydrate, as the operator runs it with argocd-cmd-params-cm
// hydrator.enabled: at start and every interval the apps with
// spec.sourceHydrator are grouped (hydrator.Groups), each group's dry
// commit rendered and committed with --repositories' write Secrets
// (repository-write, repo-write-creds) and argocd-cm's author and
// templates, and each app's status.sourceHydrator kept in memory, so that
// a dry commit hydrated before is not rendered again. A new hydrated
// commit is printed and hints the engine, which refreshes the apps that
// sync from that repository at once; a failure is printed once, until the
// outcome changes.
type agentHydrations struct {
	engine   *gitops.Engine
	hydrator *hydrator.Hydrator
	apps     []*v1alpha1.Application
	interval time.Duration
	out      io.Writer
}

// newAgentHydrations returns the agent's hydrator over engine for the apps
// with spec.sourceHydrator (nil when none has one). creds may be nil:
// pushes then go without credentials, as Argo CD tries them.
func newAgentHydrations(engine *gitops.Engine, apps []*gitops.Application, creds *repocreds.Store, hs argocdcm.HydratorSettings, interval time.Duration, out io.Writer) (*agentHydrations, error) {
	a := &agentHydrations{engine: engine, interval: interval, out: out}
	for _, app := range apps {
		if app.Spec.SourceHydrator != nil {
			a.apps = append(a.apps, app.DeepCopy())
		}
	}
	if len(a.apps) == 0 {
		return nil, nil
	}
	git, err := gitsrc.New(gitsrc.DefaultOptions())
	if err != nil {
		return nil, fmt.Errorf("hydrator: git source: %w", err)
	}
	opts := hydrator.DefaultOptions()
	opts.Git = git
	if creds != nil {
		opts.WriteCredentials = creds.WriteForProject
	}
	// Empty settings keep hydrator.New's defaults (Argo CD's).
	opts.AuthorName, opts.AuthorEmail = hs.AuthorName, hs.AuthorEmail
	opts.CommitMessageTemplate, opts.ReadmeTemplate = hs.CommitMessageTemplate, hs.ReadmeMessageTemplate
	if a.hydrator, err = hydrator.New(engine, opts); err != nil {
		return nil, fmt.Errorf("--argocd-cm: %w", err)
	}
	return a, nil
}

// run hydrates at once and then every interval until ctx ends.
func (a *agentHydrations) run(ctx context.Context) {
	t := time.NewTicker(a.interval)
	defer t.Stop()
	for {
		a.round(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// round hydrates every group once and prints what changed.
func (a *agentHydrations) round(ctx context.Context) {
	for _, group := range hydrator.Groups(a.apps) {
		if ctx.Err() != nil {
			return
		}
		prev := make([]*v1alpha1.HydrateOperation, len(group))
		for i, app := range group {
			prev[i] = app.Status.SourceHydrator.CurrentOperation.DeepCopy()
			hydrator.Begin(app, time.Now())
		}
		o := a.hydrator.Hydrate(ctx, group)
		if ctx.Err() != nil {
			return
		}
		hinted := false
		for i, app := range group {
			hydrator.Finish(app, o, time.Now())
			cur := app.Status.SourceHydrator.CurrentOperation
			if sameOutcome(prev[i], cur) {
				continue
			}
			now := time.Now().Format("15:04:05")
			if cur.Phase == v1alpha1.HydrateOperationPhaseFailed {
				fmt.Fprintf(a.out, "%s %-14s %s: %s\n", now, "HydrationFailed", app.Name, oneLine(cur.Message))
				continue
			}
			branch := app.Spec.SourceHydrator.GetHydrateToSource().TargetRevision
			what := fmt.Sprintf("dry commit %s hydrated as %s on %s", shortRev(o.DrySHA), shortRev(o.HydratedSHA), branch)
			if !o.Committed {
				what = fmt.Sprintf("dry commit %s renders as %s on %s does: nothing committed", shortRev(o.DrySHA), shortRev(o.HydratedSHA), branch)
			}
			fmt.Fprintf(a.out, "%s %-14s %s @ %s: %s\n", now, "Hydrated", app.Name, shortRev(o.DrySHA), what)
			if !hinted && (prev[i] == nil || prev[i].HydratedSHA != o.HydratedSHA) {
				// The apps sync from the branch just written: refresh them now.
				a.engine.Apps().Hint(app.Spec.SourceHydrator.GetSyncSource().RepoURL)
				hinted = true
			}
		}
	}
}

// sameOutcome reports whether two hydrations ended alike (phase, message
// and commits): the agent prints a hydration only when it changed
// something.
func sameOutcome(a, b *v1alpha1.HydrateOperation) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Phase == b.Phase && a.Message == b.Message && a.DrySHA == b.DrySHA && a.HydratedSHA == b.HydratedSHA
}

// warnNotHydrated names on stderr, once, each app with spec.sourceHydrator
// the agent runs without --hydrate: it syncs from its sync source as it
// is, which nothing hydrates.
func warnNotHydrated(stderr io.Writer, apps []*gitops.Application) {
	for _, app := range apps {
		if app.Spec.SourceHydrator != nil {
			fmt.Fprintf(stderr, "gitopsctl agent: warning: %s has spec.sourceHydrator but --hydrate is not set: it syncs from its sync source (%s) as it is, which nothing hydrates\n",
				app.Name, app.Spec.SourceHydrator.GetSyncSource().TargetRevision)
		}
	}
}
