package main

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/argocdcm"
	"github.com/kubegitops/gitops/examples/operator/controller"
	"github.com/kubegitops/gitops/hydrator"
	gitsrc "github.com/kubegitops/gitops/source/git"
	"github.com/kubegitops/gitops/source/repocreds"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Event reasons of the source hydrator.
const (
	// ReasonHydrated: a dry commit was hydrated in a new commit.
	ReasonHydrated = "Hydrated"
	// ReasonHydrationFailed: a hydration failed; status.sourceHydrator
	// says why.
	ReasonHydrationFailed = "HydrationFailed"
	// ReasonHydratorDisabled: an app has spec.sourceHydrator while
	// argocd-cmd-params-cm hydrator.enabled is not "true": it syncs from
	// its sync source, which nothing hydrates.
	ReasonHydratorDisabled = "HydratorDisabled"
)

// hydrations is Argo CD's source hydrator inside the operator, on when
// argocd-cmd-params-cm hydrator.enabled is "true": every interval the
// Applications with spec.sourceHydrator are grouped (same dry source and
// revision, same branch hydrated to), each group's dry commit rendered
// and committed with the repository-write Secrets of the operator's
// namespace, and status.sourceHydrator written; after a new hydrated
// commit the group's apps are asked for a hard refresh, so they sync it
// at once.
type hydrations struct {
	client   client.Client
	engine   *gitops.Engine
	hydrator *hydrator.Hydrator
	recorder record.EventRecorder
	interval time.Duration
	enabled  bool
	log      logr.Logger
	// settings reads argocd-cm's hydrator keys in force; build makes a
	// hydrator of them; built are the keys the hydrator was made of.
	settings func() argocdcm.HydratorSettings
	build    func(argocdcm.HydratorSettings) (*hydrator.Hydrator, error)
	built    argocdcm.HydratorSettings
	// written are the apps of the hydration running as last written (or
	// listed): writeStatus patches the difference from them.
	written map[types.UID]*v1alpha1.Application
	// marked are the apps of the hydration running whose phase Hydrating
	// was written (markHydrating): their outcome is written whatever it is.
	marked map[types.UID]bool
}

// setupHydrations adds the hydrator's loop to mgr (on the leader only).
// With hydrator.enabled off, the loop only names, once per app, the
// Applications whose spec.sourceHydrator nothing hydrates.
func setupHydrations(mgr manager.Manager, engine *gitops.Engine, creds *repocreds.Live, st *settings, f flags, log logr.Logger) error {
	if f.hydratorInterval <= 0 {
		return nil
	}
	h := &hydrations{client: mgr.GetClient(), engine: engine, recorder: mgr.GetEventRecorderFor("gitops-operator"),
		interval: f.hydratorInterval, enabled: st.params.HydratorEnabled, settings: st.hydratorSettings, log: log.WithName("hydrator")}
	if h.enabled {
		gopts := gitsrc.DefaultOptions()
		gopts.Logger = h.log
		git, err := gitsrc.New(gopts)
		if err != nil {
			return fmt.Errorf("hydrator: git source: %w", err)
		}
		h.build = func(hs argocdcm.HydratorSettings) (*hydrator.Hydrator, error) {
			opts := hydrator.DefaultOptions()
			opts.Git = git
			opts.WriteCredentials = creds.WriteForProject
			opts.Hydrating = h.markHydrating
			if hs.AuthorName != "" {
				opts.AuthorName = hs.AuthorName
			}
			if hs.AuthorEmail != "" {
				opts.AuthorEmail = hs.AuthorEmail
			}
			if hs.CommitMessageTemplate != "" {
				opts.CommitMessageTemplate = hs.CommitMessageTemplate
			}
			if hs.ReadmeMessageTemplate != "" {
				opts.ReadmeTemplate = hs.ReadmeMessageTemplate
			}
			return hydrator.New(engine, opts)
		}
		h.built = st.hydratorSettings()
		if h.hydrator, err = h.build(h.built); err != nil {
			return fmt.Errorf("ConfigMap %s/argocd-cm: %w", f.namespace, err)
		}
	}
	return mgr.Add(manager.RunnableFunc(h.run))
}

// follow rebuilds the hydrator when argocd-cm's hydrator keys changed
// since it was built (commit.author.*, sourceHydrator.*): they apply from
// the next round on, as Argo CD's commit server reads them per commit. A
// change that does not build (a template that does not parse) is logged
// and the hydrator in force stays; it is tried again when the keys change.
func (h *hydrations) follow() {
	hs := h.settings()
	if hs == h.built {
		return
	}
	next, err := h.build(hs)
	h.built = hs
	if err != nil {
		h.log.Error(err, "argocd-cm's source hydrator settings not applied; the ones in force stay")
		return
	}
	h.hydrator = next
	h.log.Info("argocd-cm's source hydrator settings applied")
}

// run hydrates at once and then every interval until ctx ends.
func (h *hydrations) run(ctx context.Context) error {
	t := time.NewTicker(h.interval)
	defer t.Stop()
	warned := map[types.UID]bool{}
	for {
		h.round(ctx, warned)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// round hydrates every group of Applications with a source hydrator once.
func (h *hydrations) round(ctx context.Context, warned map[types.UID]bool) {
	var list v1alpha1.ApplicationList
	if err := h.client.List(ctx, &list); err != nil {
		h.log.Error(err, "list Applications")
		return
	}
	var apps []*v1alpha1.Application
	for i := range list.Items {
		app := &list.Items[i]
		if app.Spec.SourceHydrator == nil || app.DeletionTimestamp != nil {
			continue
		}
		if !h.enabled {
			if !warned[app.UID] {
				warned[app.UID] = true
				h.recorder.Event(app, corev1.EventTypeWarning, ReasonHydratorDisabled,
					"spec.sourceHydrator is not hydrated: argocd-cmd-params-cm hydrator.enabled is not \"true\"; the app syncs from its sync source as it is")
			}
			continue
		}
		apps = append(apps, app)
	}
	if len(apps) > 0 {
		h.follow()
	}
	for _, group := range hydrator.Groups(apps) {
		if ctx.Err() != nil {
			return
		}
		h.hydrate(ctx, group)
	}
}

// hydrate hydrates one group and records the outcome on each app.
func (h *hydrations) hydrate(ctx context.Context, group []*v1alpha1.Application) {
	prev := make([]v1alpha1.SourceHydratorStatus, len(group))
	h.written, h.marked = map[types.UID]*v1alpha1.Application{}, map[types.UID]bool{}
	for i, app := range group {
		prev[i] = *app.Status.SourceHydrator.DeepCopy()
		h.written[app.UID] = app.DeepCopy()
		hydrator.Begin(app, time.Now())
	}
	o := h.hydrator.Hydrate(ctx, group)
	for i, app := range group {
		hydrator.Finish(app, o, time.Now())
		if !h.marked[app.UID] && unchanged(prev[i], app.Status.SourceHydrator) {
			continue
		}
		if err := h.writeStatus(ctx, app); err != nil {
			h.log.Error(err, "write status.sourceHydrator", "application", app.Namespace+"/"+app.Name)
			continue
		}
		cur := app.Status.SourceHydrator.CurrentOperation
		switch {
		case cur.Phase == v1alpha1.HydrateOperationPhaseFailed:
			h.log.Info("hydration failed", "application", app.Namespace+"/"+app.Name, "message", cur.Message)
			h.recorder.Event(app, corev1.EventTypeWarning, ReasonHydrationFailed, cur.Message)
		case prev[i].LastSuccessfulOperation == nil || prev[i].LastSuccessfulOperation.HydratedSHA != o.HydratedSHA:
			msg := fmt.Sprintf("dry commit %s hydrated as %s", o.DrySHA, o.HydratedSHA)
			h.log.Info(msg, "application", app.Namespace+"/"+app.Name)
			h.recorder.Event(app, corev1.EventTypeNormal, ReasonHydrated, msg)
			h.requestRefresh(ctx, app)
		}
	}
}

// markHydrating writes phase Hydrating (set by Begin) to apps, whose
// rendered dry commit is about to be committed, as Argo CD's controller
// marks a hydration running before it works.
func (h *hydrations) markHydrating(ctx context.Context, apps []*v1alpha1.Application) {
	for _, app := range apps {
		if err := h.writeStatus(ctx, app); err != nil {
			h.log.Error(err, "write status.sourceHydrator", "application", app.Namespace+"/"+app.Name)
			continue
		}
		h.marked[app.UID] = true
	}
}

// unchanged reports whether a hydration left the status as it was but
// for its times: the same phase, message and commits (an app whose dry
// commit was hydrated before is not written again every round).
func unchanged(a, b v1alpha1.SourceHydratorStatus) bool {
	if a.CurrentOperation == nil || b.CurrentOperation == nil {
		return a.CurrentOperation == b.CurrentOperation
	}
	x, y := *a.CurrentOperation, *b.CurrentOperation
	x.StartedAt, x.FinishedAt, y.FinishedAt = y.StartedAt, nil, nil
	a.CurrentOperation, b.CurrentOperation = &x, &y
	return reflect.DeepEqual(a, b)
}

// writeStatus merge-patches status.sourceHydrator alone, from the app as
// last written, so it never races the reconciler's writes of the other
// fields, and a field the hydration cleared (a Hydrating operation's
// finishedAt, a Failed one's hydratedSHA) is cleared in the API too.
func (h *hydrations) writeStatus(ctx context.Context, app *v1alpha1.Application) error {
	base := h.written[app.UID]
	if base == nil {
		return fmt.Errorf("no listed copy of %s/%s to patch from", app.Namespace, app.Name)
	}
	want := app.Status.SourceHydrator.DeepCopy()
	err := h.client.Status().Patch(ctx, app, client.MergeFrom(base))
	app.Status.SourceHydrator = *want
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		h.written[app.UID] = app.DeepCopy()
	}
	return err
}

// requestRefresh asks the reconciler for a hard refresh of app, so that
// it resolves its sync branch again and syncs the hydrated commit now.
func (h *hydrations) requestRefresh(ctx context.Context, app *v1alpha1.Application) {
	patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:"hard"}}}`, controller.AnnotationRefresh))
	if err := h.client.Patch(ctx, app, client.RawPatch(types.MergePatchType, patch)); err != nil && !apierrors.IsNotFound(err) {
		h.log.Error(err, "request a refresh after hydration", "application", app.Namespace+"/"+app.Name)
	}
}
