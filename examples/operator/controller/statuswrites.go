package controller

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
)

// settleWait bounds how long settled looks for the app Synced after a
// sync: the cluster cache sees the sync's writes through its watches,
// usually within a fraction of a second.
const settleWait = 3 * time.Second

// settled is the status to write after an automated sync ran: next (the
// refresh before the sync, with the sync's outcome) unless a refresh right
// after the sync finds the app Synced, in which case it is that refresh
// with the sync's outcome and history. The app is then written once for
// the sync, Synced with its result, rather than OutOfSync with the result
// (already untrue when written) and Synced a second later: one write per
// change a user sees. A refresh that fails or still finds the app
// OutOfSync (the cluster cache not caught up yet) leaves next as it was.
func (r *Reconciler) settled(ctx context.Context, app *v1alpha1.Application, prev, next v1alpha1.ApplicationStatus, log logr.Logger) v1alpha1.ApplicationStatus {
	if s := next.OperationState; s == nil || s.Phase != string(sync.Succeeded) {
		return next
	}
	// The cluster cache may not have seen the sync's writes yet: look
	// again, for at most settleWait, before writing OutOfSync with the
	// result. A refresh whose live objects did not move is answered by
	// the engine's memo, so each look costs little.
	var st appstatus.Status
	var err error
	_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, settleWait, true, func(ctx context.Context) (bool, error) {
		st, err = r.opts.Engine.Refresh(ctx, app)
		return err != nil || st.Sync == appstatus.Synced, nil
	})
	if err != nil || st.Sync != appstatus.Synced {
		return next
	}
	out := prev
	out.OperationState, out.History = next.OperationState, next.History
	out = appstatus.Refreshed(out, st, len(app.Spec.AllSources()), r.now())
	if tree, summary, err := r.opts.Engine.ResourceTree(ctx, app); err == nil {
		out.ResourceTree, out.Summary = tree, summary
	} else {
		log.V(1).Info("resource tree not read after the sync: the last one stays", "error", err.Error())
		out.ResourceTree, out.Summary = next.ResourceTree, next.Summary
	}
	return out
}

// writeStatus writes next through the status subresource when it differs
// from app's status in more than reconciledAt, or when reconciledAt is
// older than the interval. It merge-patches only status, so it never
// conflicts with a person editing the spec; app is updated from the
// response.
func (r *Reconciler) writeStatus(ctx context.Context, app *v1alpha1.Application, next v1alpha1.ApplicationStatus) error {
	prev := app.Status
	if sameStatus(prev, next) && prev.ReconciledAt != nil &&
		((next.ReconciledAt != nil && prev.ReconciledAt.Equal(next.ReconciledAt)) || r.times().Interval < 0 || r.now().Sub(prev.ReconciledAt.Time) < r.times().Interval) {
		return nil
	}
	orig := app.DeepCopy()
	app.Status = next
	if err := r.client.Status().Patch(ctx, app, client.MergeFrom(orig)); err != nil {
		return fmt.Errorf("application %s: write status: %w", nameOf(app), err)
	}
	r.remember(app)
	return nil
}

// treeWait is how long the write of next waits (zero: write now): when
// next differs from prev in the resource tree and summary alone, no
// refresh was asked for, and prev was written less than TreeWriteDelay ago
// (its reconciledAt), the rest of that delay. See Options.TreeWriteDelay.
func (r *Reconciler) treeWait(app *v1alpha1.Application, prev, next v1alpha1.ApplicationStatus) time.Duration {
	delay := r.opts.TreeWriteDelay
	if delay <= 0 || prev.ReconciledAt == nil || app.Annotations[AnnotationRefresh] != "" {
		return 0
	}
	if sameStatus(prev, next) {
		return 0
	}
	a, b := prev, next
	a.ResourceTree, a.Summary = nil, v1alpha1.ApplicationSummary{}
	b.ResourceTree, b.Summary = nil, v1alpha1.ApplicationSummary{}
	if !sameStatus(a, b) {
		return 0
	}
	return max(delay-r.now().Sub(prev.ReconciledAt.Time), 0)
}

// sameStatus reports whether two statuses are equal but for reconciledAt,
// as the API server stores them (times at second precision).
func sameStatus(a, b v1alpha1.ApplicationStatus) bool {
	a.ReconciledAt, b.ReconciledAt = nil, nil
	return resource.ObjectsEqual(&a, &b)
}

// keepLastGood applies engine.KeepsLastGood and engine.KeptStatus (the
// engine's run loop rules) to the written status: a failure that says
// nothing of the live state keeps the last status written (revision,
// health, resources) with the sync status Unknown, the failure as its
// conditions and the failure's reconciledAt; an app never compared has
// nothing to keep.
func keepLastGood(prev, next v1alpha1.ApplicationStatus, st appstatus.Status, err error) v1alpha1.ApplicationStatus {
	if !engine.KeepsLastGood(st, err) || prev.ReconciledAt == nil || prev.Sync.Status == string(appstatus.Unknown) {
		return next
	}
	kept := prev
	kept.Sync.Status = string(appstatus.Unknown)
	kept.Conditions = next.Conditions
	kept.ReconciledAt = next.ReconciledAt
	return kept
}
