package main

import (
	"context"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/state"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/sync"
)

// The portal serves apps from one of two places, and every route reads an
// app's state and changes it through the functions of this file:
//
//   - a folder (--apps): the portal's engine runs them (Engine.Run); status,
//     history and the last operation are the engine's, and a sync, a
//     rollback or a termination is the engine's own call;
//   - a namespace of the cluster (--namespace, nsBackend): the operator
//     runs them; status, history and the last operation are what the
//     operator wrote in each Application's status, and a sync, a rollback,
//     a termination or a refresh is written to the Application object as
//     Argo CD's API server writes it, for the operator to carry out. The
//     portal's engine then only reads: the diff, the live and desired
//     objects, the actions, the parameters.

// appStatus is a's status: the engine's, or the operator's (namespace).
func (s *server) appStatus(a *gitops.Application) (appstatus.Status, bool) {
	if s.ns != nil {
		return statusOfObject(a)
	}
	return s.opts.Engine.Apps().AppStatus(v1alpha1.KeyOf(a))
}

// diffStatus is a's status with each changed object's diff. The
// operator's status has no diffs, so in a namespace the portal's engine
// compares the app now (Engine.Refresh: render cache and cluster caches
// make it cheap when nothing changed); a comparison that fails gives the
// operator's status.
func (s *server) diffStatus(ctx context.Context, a *gitops.Application) appstatus.Status {
	if s.ns == nil {
		st, _ := s.opts.Engine.Apps().AppStatus(v1alpha1.KeyOf(a))
		return st
	}
	ctx, cancel := context.WithTimeout(ctx, kubeTimeout*3)
	defer cancel()
	st, err := s.opts.Engine.Refresh(ctx, a)
	if err != nil {
		st, _ = statusOfObject(a)
	}
	return st
}

// appHistory is a's history, oldest first.
func (s *server) appHistory(ctx context.Context, a *gitops.Application) ([]appstatus.HistoryEntry, error) {
	if s.ns != nil {
		return historyOfObject(a), nil
	}
	return s.opts.Engine.History(ctx, v1alpha1.KeyOf(a))
}

// appLastOperation is a's last operation, or nil.
func (s *server) appLastOperation(ctx context.Context, a *gitops.Application) (*state.OperationState, error) {
	if s.ns != nil {
		return operationOfObject(a), nil
	}
	return s.opts.Engine.LastOperation(ctx, v1alpha1.KeyOf(a))
}

// appTreeOf is a's resource tree: the engine's, or the one the operator
// wrote in the Application's status (the engine's when it wrote none).
func (s *server) appTreeOf(ctx context.Context, a *gitops.Application) (*v1alpha1.ApplicationTree, error) {
	if s.ns != nil && a.Status.ResourceTree != nil {
		return a.Status.ResourceTree, nil
	}
	t, _, err := s.opts.Engine.ResourceTree(ctx, a)
	return t, err
}

// syncApp syncs a: the engine's sync, or (namespace) the operation field
// written and the operator's outcome awaited.
func (s *server) syncApp(ctx context.Context, c caller, a *gitops.Application, req gitops.SyncRequest) (sync.Result, error) {
	if s.ns != nil {
		return s.ns.sync(ctx, c, a, req)
	}
	return s.opts.Engine.Sync(ctx, a, req)
}

// rollbackApp syncs a to history entry id again.
func (s *server) rollbackApp(ctx context.Context, c caller, a *gitops.Application, id int64, prune bool) (sync.Result, error) {
	if s.ns != nil {
		return s.ns.rollback(ctx, c, a, id, prune)
	}
	return s.opts.Engine.Rollback(ctx, a, id, prune)
}

// terminateApp asks a's running operation to end.
func (s *server) terminateApp(ctx context.Context, a *gitops.Application) error {
	if s.ns != nil {
		return s.ns.terminate(ctx, a)
	}
	return s.opts.Engine.Terminate(v1alpha1.KeyOf(a))
}

// refreshApp asks for a's refresh now (hard: past every cache).
func (s *server) refreshApp(ctx context.Context, a *gitops.Application, hard bool) error {
	if s.ns != nil {
		return s.ns.refresh(ctx, a, hard)
	}
	if hard {
		for _, src := range a.Spec.AllSources() {
			s.opts.Engine.Apps().Invalidate(src.RepoURL)
		}
	}
	return s.opts.Engine.Apps().Upsert(*a)
}
