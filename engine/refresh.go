package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/engine/internal/compare"
	"github.com/kubegitops/gitops/engine/internal/desired"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/source"
)

// Refresh compares an application's desired state in Git with the live
// state of its destination: it resolves and snapshots each source
// (verifying its GnuPG signatures when the project's source integrity
// criteria ask: a failure is a ComparisonError condition beside the
// comparison, as in Argo CD, and Sync refuses the revision), renders
// it (cached by content), checks every object against the app's project,
// diffs each object against the cluster cache, judges health and
// aggregates. The error is non-nil when the comparison could not be made;
// the Status then says Unknown and carries the error as a condition.
func (ops Ops) Refresh(ctx context.Context, app *Application) (appstatus.Status, error) {
	e := ops.e

	st, _, err := e.refresh(ctx, app, false)
	e.notifyStatus(app, st)
	return st, err
}

// HardRefresh is Refresh past every cache (Argo CD's hard refresh): the
// branches and tags of the app's repositories are resolved again (see
// Invalidate) and its manifests rendered again even when the render cache
// holds them, and the new render replaces the cached one. Run does it
// every Options.HardInterval.
func (ops Ops) HardRefresh(ctx context.Context, app *Application) (appstatus.Status, error) {
	e := ops.e

	st, _, err := e.refresh(ctx, app, true)
	e.notifyStatus(app, st)
	return st, err
}

// refresh is Refresh (HardRefresh when hard) that also returns the
// Applications the app renders (app of apps). It is a pipeline of the
// engine's parts: the inputs (project, destination, resolved revisions,
// the app's Differ), then, unless the memo answers (nothing the last
// refresh read has changed), the desired state (engine/internal/desired)
// and its comparison with the live state (engine/internal/compare), and
// last the status made of the outcome.
func (e *Engine) refresh(ctx context.Context, app *Application, hard bool) (appstatus.Status, []*Application, error) {
	defer e.observeRefresh(app, time.Now())
	in, ct, err := e.refreshInputs(ctx, app, hard)
	if err != nil {
		return failedRefresh(app, ct, err)
	}
	out, memoized := e.reuse(ctx, app, in, hard)
	if !memoized {
		want, err := in.parts.desired.Build(ctx, app, desiredView(in.cs), desired.Request{Resolved: in.revs, Hard: hard})
		if err != nil {
			// The revision was resolved: the status names what failed
			// to render.
			st, apps, err := failedRefresh(app, appstatus.ConditionComparisonError, err)
			st.Revision = desired.Revision(in.revs)
			return st, apps, err
		}
		if in.differErr != nil {
			return failedRefresh(app, appstatus.ConditionInvalidSpec, in.differErr)
		}
		cmp, err := in.parts.comparer.Compare(ctx, app, e.instanceOf(app), in.proj, in.dest, in.differ, want.Objects)
		if err != nil {
			return failedRefresh(app, appstatus.ConditionComparisonError, err)
		}
		out = compare.Outcome{Result: cmp, Revisions: want.Revisions, Excluded: want.Excluded}
		if in.memoizable {
			in.parts.comparer.Keep(e.instanceOf(app), in.dest, in.differ, in.memo, out)
		}
	}
	e.metrics.Refreshed(memoized)
	return e.statusOf(app, in, out)
}

// refreshInputs are what a refresh reads before it renders.
type refreshInputs struct {
	// parts are the live parts the refresh uses throughout.
	parts *liveParts
	proj  *Project
	cs    *clusterState
	dest  compare.Destination
	revs  []source.Revision
	// differ is the app's Differ, unless differErr says why there is none
	// (a bad compare-options annotation: reported once the render is known
	// to succeed).
	differ    Differ
	differErr error
	// memo fingerprints the inputs, when memoizable.
	memo       compare.Inputs
	memoizable bool
	// unverified says why the sources fail their project's source
	// integrity criteria (a *SourceIntegrityError: reported as a
	// ComparisonError condition beside the comparison, as Argo CD does),
	// or is nil.
	unverified error
}

// refreshInputs checks the app against its project, connects its
// destination, resolves its sources and picks its Differ. On error, ct is
// the condition type the error is reported as.
func (e *Engine) refreshInputs(ctx context.Context, app *Application, hard bool) (in refreshInputs, ct appstatus.ConditionType, err error) {
	in.parts = e.parts()
	if in.proj, err = e.project(app); err != nil {
		return in, appstatus.ConditionInvalidSpec, err
	}
	if err = e.checkApplication(in.proj, app); err != nil {
		return in, appstatus.ConditionInvalidSpec, err
	}
	if in.cs, err = e.cluster(ctx, app.Spec.Destination); err != nil {
		return in, appstatus.ConditionComparisonError, err
	}
	if in.revs, err = e.sources.ResolveAll(ctx, app, hard); err != nil {
		return in, appstatus.ConditionComparisonError, err
	}
	if err = e.verifySources(ctx, app, in.proj, in.revs, hard); err != nil {
		var failed *SourceIntegrityError
		if !errors.As(err, &failed) {
			return in, appstatus.ConditionComparisonError, err
		}
		in.unverified = err
	}
	in.dest = e.compareView(in.cs)
	in.differ, in.differErr = in.parts.comparer.Differ(app, e.instanceOf(app), in.dest)
	in.memo, in.memoizable = in.parts.comparer.Inputs(app, e.instanceOf(app), in.dest, in.revs, e.projectFingerprint(app))
	in.memoizable = in.memoizable && in.differErr == nil
	return in, "", nil
}

// reuse answers a refresh from the app's memo when it may (not a hard
// refresh) and nothing the last refresh read has changed.
func (e *Engine) reuse(ctx context.Context, app *Application, in refreshInputs, hard bool) (compare.Outcome, bool) {
	if !in.memoizable || hard {
		return compare.Outcome{}, false
	}
	return in.parts.comparer.Reuse(ctx, e.instanceOf(app), in.dest, in.differ, in.memo)
}

// statusOf makes the app's status of a refresh's outcome: its rows and
// conditions, the warnings of excluded and orphaned objects, and the
// aggregated health. A policy refusal makes the sync status Unknown and
// is returned as the error.
func (e *Engine) statusOf(app *Application, in refreshInputs, out compare.Outcome) (appstatus.Status, []*Application, error) {
	cmp := out.Result
	st := appstatus.Status{Revision: desired.Revision(out.Revisions), Resources: cmp.Rows, Conditions: cmp.Conditions, Sync: cmp.Sync}
	if c := desired.ExcludedCondition(out.Excluded); c != nil {
		st.Conditions = append(st.Conditions, *c)
	}
	if c := in.parts.comparer.Orphans(in.proj, app, in.dest); c != nil {
		st.Conditions = append(st.Conditions, *c)
	}
	if in.unverified != nil {
		st.Conditions = append(st.Conditions, appstatus.Condition{Type: appstatus.ConditionComparisonError, Message: in.unverified.Error(), Err: in.unverified})
	}
	st.Health = health.Aggregate(cmp.Healths, health.DefaultAggregateOptions())
	st.ReconciledAt = time.Now()
	if cmp.PolicyErr != nil {
		st.Sync = appstatus.Unknown
		return st, cmp.Children, fmt.Errorf("refresh %s: %w", app.Name, cmp.PolicyErr)
	}
	return st, cmp.Children, nil
}

// failedRefresh is the status of a refresh that could not compare: sync
// and health Unknown, and err as a condition of type ct.
func failedRefresh(app *Application, ct appstatus.ConditionType, err error) (appstatus.Status, []*Application, error) {
	st := appstatus.Status{Sync: appstatus.Unknown, Health: health.Status{Code: health.Unknown}, ReconciledAt: time.Now(),
		Conditions: []appstatus.Condition{{Type: ct, Message: err.Error(), Err: err}}}
	return st, nil, fmt.Errorf("refresh %s: %w", app.Name, err)
}

// observeRefresh records the duration of a refresh that started at start.
func (e *Engine) observeRefresh(app *Application, start time.Time) {
	e.metrics.Reconciled(e.metricsApp(app), time.Since(start).Seconds())
}

// differFor returns the app's Differ for its destination cs
// (compare.Comparer.Differ).
func (e *Engine) differFor(app *Application, cs *clusterState) (Differ, error) {
	return e.parts().comparer.Differ(app, e.instanceOf(app), e.compareView(cs))
}

// withoutChildApplications drops the Applications an app renders from what
// it syncs, unless the host applies them (Options.ApplyChildApplications).
func (e *Engine) withoutChildApplications(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	if e.opts.ApplyChildApplications {
		return objs
	}
	out := objs[:0:0]
	for _, o := range objs {
		if !compare.IsApplication(o) {
			out = append(out, o)
		}
	}
	return out
}
