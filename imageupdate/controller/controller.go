package controller

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/imageupdate"
	"github.com/kubegitops/gitops/state"
)

// AppOf returns what the image updater needs of app, as plain values:
// name, annotations, its single source (repository, path, revision), its
// repository credentials (Engine.Sources().RepoCredentials), its source type (see
// below) and the images its manifests run, rendered as e renders them.
// Multi-source apps are refused: Argo CD Image Updater does not update
// them either.
//
// The source type is Argo CD Image Updater's: Kustomize when the
// write-back-target annotation starts with "kustomization"; else the app's
// status.sourceType, or, when the app carries none (a spec given in Go or
// read from a file), the type its source renders with
// (Engine.SourceType: a chart in the app's path is Helm without any
// spec.source.helm). An app of another type (a plain directory, a plugin)
// is refused with an *imageupdate.Error naming it, as Argo CD Image
// Updater skips it.
func AppOf(ctx context.Context, e *engine.Engine, app *engine.Application) (imageupdate.App, error) {
	src := app.Spec.Source
	if src == nil || len(app.Spec.Sources) > 0 {
		return imageupdate.App{}, &imageupdate.Error{App: app.Name, Err: fmt.Errorf("%w: the image updater updates single-source applications only", imageupdate.ErrWriteBackTarget)}
	}
	objs, _, err := e.Render(ctx, app)
	if err != nil {
		return imageupdate.App{}, fmt.Errorf("application %q: render for the image updater: %w", app.Name, err)
	}
	st, err := sourceType(ctx, e, app)
	if err != nil {
		return imageupdate.App{}, err
	}
	out := imageupdate.App{
		Name: app.Name, Annotations: app.Annotations, RepoURL: src.RepoURL, Path: src.Path, TargetRevision: src.TargetRevision,
		SourceType: st, Images: imageupdate.ImagesOf(objs), Credentials: e.Sources().RepoCredentials(app, src.RepoURL),
	}
	if src.Helm != nil {
		for _, p := range src.Helm.Parameters {
			out.SpecOverride.HelmParameters = append(out.SpecOverride.HelmParameters, imageupdate.HelmParameter{Name: p.Name, Value: p.Value, ForceString: p.ForceString})
		}
	}
	if src.Kustomize != nil {
		out.SpecOverride.KustomizeImages = append(out.SpecOverride.KustomizeImages, src.Kustomize.Images...)
	}
	return out, nil
}

// sourceType decides the app's type as Argo CD Image Updater's
// getApplicationSourceType does for a single-source app.
func sourceType(ctx context.Context, e *engine.Engine, app *engine.Application) (imageupdate.SourceType, error) {
	if strings.HasPrefix(app.Annotations[imageupdate.Prefix+"write-back-target"], "kustomization") {
		return imageupdate.SourceKustomize, nil
	}
	t := app.Status.SourceType
	if t == "" {
		var err error
		if t, err = e.SourceType(ctx, app); err != nil {
			return "", fmt.Errorf("application %q: source type for the image updater: %w", app.Name, err)
		}
	}
	switch imageupdate.SourceType(t) {
	case imageupdate.SourceHelm, imageupdate.SourceKustomize:
		return imageupdate.SourceType(t), nil
	}
	return "", &imageupdate.Error{App: app.Name, Err: fmt.Errorf("%w: the image updater updates Kustomize and Helm applications only; this one's source type is %s", imageupdate.ErrWriteBackTarget, t)}
}

// ApplyOverride is the argocd write-back: it merges ov into the override
// e holds for the app (in the app's state record, Options.State, so it
// outlives the process: UpdateApps and Run apply the held override to the
// app again after a restart), merges it into the app's source (kustomize
// images or Helm parameters, replacing entries for the same image or
// parameter) and, while e's Run runs, hands the app to Engine.Apps().Upsert so
// the engine renders with it from the next refresh. It returns the app as
// changed.
func ApplyOverride(ctx context.Context, e *engine.Engine, app engine.Application, ov imageupdate.Override) (engine.Application, error) {
	if app.Spec.Source == nil {
		return app, &imageupdate.Error{App: app.Name, Err: fmt.Errorf("%w: no single source to override", imageupdate.ErrWriteBackTarget)}
	}
	key := v1alpha1.KeyOf(&app)
	err := e.Apps().UpdateAppState(ctx, key, func(st *state.AppState) (bool, error) {
		held := ov
		prev, err := decodeHeld(key, st.ImageOverride)
		if err != nil {
			return false, err
		}
		if prev != nil {
			held = ov.Merge(*prev)
		}
		raw, err := encodeHeld(held)
		if err != nil {
			return false, err
		}
		st.ImageOverride = raw
		return true, nil
	})
	if err != nil {
		return app, fmt.Errorf("application %q: keep the image override: %w", app.Name, err)
	}
	app = WithOverride(app, ov)
	if err := upsertIfRunning(e, app); err != nil {
		return app, err
	}
	return app, nil
}

// upsertIfRunning hands app to e's Run, when it runs.
func upsertIfRunning(e *engine.Engine, app engine.Application) error {
	if err := e.Apps().Upsert(app); err != nil && !errors.Is(err, engine.ErrNotRunning) {
		return err
	}
	return nil
}

// HeldOverride returns the override e holds for the app of key; nil when
// none. A record whose override is not one (written by something else) is
// an error naming the app.
func HeldOverride(ctx context.Context, e *engine.Engine, key v1alpha1.AppKey) (*imageupdate.Override, error) {
	var held *imageupdate.Override
	err := e.Apps().UpdateAppState(ctx, key, func(st *state.AppState) (bool, error) {
		var err error
		held, err = decodeHeld(key, st.ImageOverride)
		return false, err
	})
	return held, err
}

// WithOverride returns app with ov merged into its single source, as
// Argo CD Image Updater's argocd write-back changes an Application:
// spec.source.kustomize.images entries are replaced by image name and
// spec.source.helm.parameters by parameter name; the rest of the source is
// kept. It changes nothing else and holds nothing (ApplyOverride also
// keeps the override in the engine's state): a host that stores
// Applications itself, as the operator's custom resources, writes the
// result back. An app without a single source is returned unchanged.
func WithOverride(app engine.Application, ov imageupdate.Override) engine.Application {
	if app.Spec.Source == nil {
		return app
	}
	src := *app.Spec.Source
	if len(ov.KustomizeImages) > 0 {
		k := engine.ApplicationSourceKustomize{}
		if src.Kustomize != nil {
			k = *src.Kustomize
		}
		k.Images = ov.Merge(imageupdate.Override{KustomizeImages: k.Images}).KustomizeImages
		src.Kustomize = &k
	}
	if len(ov.HelmParameters) > 0 {
		h := engine.ApplicationSourceHelm{}
		if src.Helm != nil {
			h = *src.Helm
		}
		var base imageupdate.Override
		for _, p := range h.Parameters {
			base.HelmParameters = append(base.HelmParameters, imageupdate.HelmParameter{Name: p.Name, Value: p.Value, ForceString: p.ForceString})
		}
		h.Parameters = nil
		for _, p := range ov.Merge(base).HelmParameters {
			h.Parameters = append(h.Parameters, engine.HelmParameter{Name: p.Name, Value: p.Value, ForceString: p.ForceString})
		}
		src.Helm = &h
	}
	app.Spec.Source = &src
	return app
}

// reapplyHeld gives app the override e holds for it, when its spec lacks
// it (after a restart the host hands the engine the spec without it);
// while Run runs the app is upserted.
func reapplyHeld(ctx context.Context, e *engine.Engine, app engine.Application) (engine.Application, error) {
	held, err := HeldOverride(ctx, e, v1alpha1.KeyOf(&app))
	if err != nil || held == nil || app.Spec.Source == nil {
		return app, err
	}
	next := WithOverride(app, *held)
	if reflect.DeepEqual(next.Spec.Source, app.Spec.Source) {
		return app, nil
	}
	if err := upsertIfRunning(e, next); err != nil {
		return app, err
	}
	return next, nil
}

// UpdateApps runs one image updater round over apps with e: for each app
// with an image-list it applies the override e holds for it (if its spec
// lacks it), builds the imageupdate.App (AppOf), runs u.Update, applies
// an argocd override (ApplyOverride; not in a dry run) and, after a git
// commit, hints the repository (Engine.Apps().Hint) so the engine refreshes at
// once. Apps without the annotation are skipped without rendering. It
// returns one result per app updated and the first error (the other apps
// still run).
func UpdateApps(ctx context.Context, e *engine.Engine, u *imageupdate.Updater, apps []engine.Application) ([]imageupdate.Result, error) {
	var results []imageupdate.Result
	var first error
	for i := range apps {
		app := apps[i]
		if !hasImageList(&app) {
			continue
		}
		app, err := reapplyHeld(ctx, e, app)
		var in imageupdate.App
		if err == nil {
			in, err = AppOf(ctx, e, &app)
		}
		if err == nil {
			var res imageupdate.Result
			if res, err = u.Update(ctx, in); err == nil {
				if res.Override != nil && !res.DryRun {
					_, err = ApplyOverride(ctx, e, app, *res.Override)
				}
				if res.Commit != "" {
					e.Apps().Hint(in.RepoURL)
				}
				results = append(results, res)
			}
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return results, first
}

// hasImageList reports whether app asks for the image updater.
func hasImageList(app *engine.Application) bool {
	_, ok := app.Annotations[imageupdate.Prefix+"image-list"]
	return ok
}

// Run runs the image updater beside e's Run until ctx ends: every
// interval (default: u's registry interval) it runs UpdateApps over the
// top-level apps Run reconciles that this replica owns and that carry an
// image-list (Engine.Apps().OwnedApps: the specs Run holds, so an argocd override
// already held is seen and not applied again). Child apps are left out:
// their spec, and the git write-back, belong to their parent's manifests.
// report, when set, receives each round's results and first error. It
// returns ctx's error; e's Run must be running for rounds to find apps.
func Run(ctx context.Context, e *engine.Engine, u *imageupdate.Updater, interval time.Duration, report func([]imageupdate.Result, error)) error {
	if interval <= 0 {
		interval = u.Registry().Interval()
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		var apps []engine.Application
		for _, app := range e.Apps().OwnedApps() {
			if hasImageList(&app) {
				apps = append(apps, app)
			}
		}
		res, err := UpdateApps(ctx, e, u, apps)
		if report != nil && ctx.Err() == nil {
			report(res, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
