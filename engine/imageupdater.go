package engine

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"time"

	"github.com/kubegitops/gitops/imageupdate"
)

// ImageUpdateApp returns what the image updater needs of app, as plain
// values: name, annotations, its single source (repository, path,
// revision), its repository credentials (Options.Credentials), its source
// type (Helm when the source has Helm options or a chart, else Kustomize)
// and the images its manifests run, rendered as the engine renders them.
// Multi-source apps are refused: Argo CD Image Updater does not update
// them either.
func (e *Engine) ImageUpdateApp(ctx context.Context, app *Application) (imageupdate.App, error) {
	src := app.Spec.Source
	if src == nil || len(app.Spec.Sources) > 0 {
		return imageupdate.App{}, &imageupdate.Error{App: app.Name, Err: fmt.Errorf("%w: the image updater updates single-source applications only", imageupdate.ErrWriteBackTarget)}
	}
	objs, _, err := e.Render(ctx, app)
	if err != nil {
		return imageupdate.App{}, fmt.Errorf("application %q: render for the image updater: %w", app.Name, err)
	}
	out := imageupdate.App{
		Name: app.Name, Annotations: app.Annotations, RepoURL: src.RepoURL, Path: src.Path, TargetRevision: src.TargetRevision,
		SourceType: imageupdate.SourceKustomize, Images: imageupdate.ImagesOf(objs),
	}
	if src.Helm != nil || src.Chart != "" {
		out.SourceType = imageupdate.SourceHelm
	}
	if src.Helm != nil {
		for _, p := range src.Helm.Parameters {
			out.SpecOverride.HelmParameters = append(out.SpecOverride.HelmParameters, imageupdate.HelmParameter{Name: p.Name, Value: p.Value, ForceString: p.ForceString})
		}
	}
	if src.Kustomize != nil {
		out.SpecOverride.KustomizeImages = append(out.SpecOverride.KustomizeImages, src.Kustomize.Images...)
	}
	if e.opts.Credentials != nil {
		out.Credentials = e.opts.Credentials(src.RepoURL)
	}
	return out, nil
}

// ApplyImageOverride is the argocd write-back: it merges ov into the
// override the engine holds for the app (in Options.State, so it outlives
// the process: UpdateImages and RunImageUpdater apply the held override to
// the app again after a restart), merges it into the app's source
// (kustomize images or Helm parameters, replacing entries for the same
// image or parameter) and, while Run runs, hands the app to Upsert so the
// engine renders with it from the next refresh. It returns the app as
// changed.
func (e *Engine) ApplyImageOverride(ctx context.Context, app Application, ov imageupdate.Override) (Application, error) {
	if app.Spec.Source == nil {
		return app, &imageupdate.Error{App: app.Name, Err: fmt.Errorf("%w: no single source to override", imageupdate.ErrWriteBackTarget)}
	}
	e.stateMu.Lock()
	st, err := e.opts.State.Load(ctx, e.AppKey(&app))
	if err == nil {
		held := ov
		if st.ImageOverride != nil {
			held = ov.Merge(*st.ImageOverride)
		}
		st.ImageOverride = &held
		err = e.opts.State.Save(ctx, e.AppKey(&app), st)
	}
	e.stateMu.Unlock()
	if err != nil {
		return app, fmt.Errorf("application %q: keep the image override: %w", app.Name, err)
	}
	app = WithImageOverride(app, ov)
	if e.running() != nil {
		if err := e.Upsert(app); err != nil {
			return app, err
		}
	}
	return app, nil
}

// HeldImageOverride returns the override the engine holds for an app (nil
// when none).
func (e *Engine) HeldImageOverride(ctx context.Context, appName string) (*imageupdate.Override, error) {
	st, err := e.opts.State.Load(ctx, appName)
	if err != nil {
		return nil, err
	}
	return st.ImageOverride, nil
}

// WithImageOverride returns app with ov merged into its single source, as
// Argo CD Image Updater's argocd write-back changes an Application:
// spec.source.kustomize.images entries are replaced by image name and
// spec.source.helm.parameters by parameter name; the rest of the source is
// kept. It changes nothing else and holds nothing (ApplyImageOverride also
// keeps the override in the engine's state): a host that stores
// Applications itself, as the operator's custom resources, writes the
// result back. An app without a single source is returned unchanged.
func WithImageOverride(app Application, ov imageupdate.Override) Application {
	if app.Spec.Source == nil {
		return app
	}
	src := *app.Spec.Source
	if len(ov.KustomizeImages) > 0 {
		k := ApplicationSourceKustomize{}
		if src.Kustomize != nil {
			k = *src.Kustomize
		}
		k.Images = ov.Merge(imageupdate.Override{KustomizeImages: k.Images}).KustomizeImages
		src.Kustomize = &k
	}
	if len(ov.HelmParameters) > 0 {
		h := ApplicationSourceHelm{}
		if src.Helm != nil {
			h = *src.Helm
		}
		var base imageupdate.Override
		for _, p := range h.Parameters {
			base.HelmParameters = append(base.HelmParameters, imageupdate.HelmParameter{Name: p.Name, Value: p.Value, ForceString: p.ForceString})
		}
		h.Parameters = nil
		for _, p := range ov.Merge(base).HelmParameters {
			h.Parameters = append(h.Parameters, HelmParameter{Name: p.Name, Value: p.Value, ForceString: p.ForceString})
		}
		src.Helm = &h
	}
	app.Spec.Source = &src
	return app
}

// reapplyHeld gives app the override the engine holds for it, when its
// spec lacks it (after a restart the host hands the engine the spec
// without it); while Run runs the app is upserted.
func (e *Engine) reapplyHeld(ctx context.Context, app Application) (Application, error) {
	held, err := e.HeldImageOverride(ctx, e.AppKey(&app))
	if err != nil || held == nil || app.Spec.Source == nil {
		return app, err
	}
	next := WithImageOverride(app, *held)
	if reflect.DeepEqual(next.Spec.Source, app.Spec.Source) {
		return app, nil
	}
	if e.running() != nil {
		if err := e.Upsert(next); err != nil {
			return app, err
		}
	}
	return next, nil
}

// UpdateImages runs one image updater round over apps inside the engine:
// for each app with an image-list it applies the override the engine
// holds for it (if its spec lacks it), builds the imageupdate.App
// (ImageUpdateApp), runs u.Update, applies an argocd override
// (ApplyImageOverride; not in a dry run) and, after a git commit, hints the repository so
// the engine refreshes at once. Apps without the annotation are skipped
// without rendering. It returns one result per app updated and the first
// error (the other apps still run).
func (e *Engine) UpdateImages(ctx context.Context, u *imageupdate.Updater, apps []Application) ([]imageupdate.Result, error) {
	var results []imageupdate.Result
	var first error
	for i := range apps {
		app := apps[i]
		if _, ok := app.Annotations[imageupdate.Prefix+"image-list"]; !ok {
			continue
		}
		app, err := e.reapplyHeld(ctx, app)
		var in imageupdate.App
		if err == nil {
			in, err = e.ImageUpdateApp(ctx, &app)
		}
		if err == nil {
			var res imageupdate.Result
			if res, err = u.Update(ctx, in); err == nil {
				if res.Override != nil && !res.DryRun {
					_, err = e.ApplyImageOverride(ctx, app, *res.Override)
				}
				if res.Commit != "" {
					e.Hint(in.RepoURL)
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

// imageUpdaterApps returns the specs Run holds now (held overrides
// included) of the apps this replica owns that have an image-list, sorted
// by name. Child apps (rendered by an app of apps) are left out: their
// spec belongs to their parent's manifests, where the git write-back
// belongs too.
func (e *Engine) imageUpdaterApps() []Application {
	r := e.running()
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Application
	for n, st := range r.apps {
		if !r.ownsLocked(n) || st.app == nil || st.parent != "" {
			continue
		}
		if _, ok := st.app.Annotations[imageupdate.Prefix+"image-list"]; ok {
			out = append(out, *st.app)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// RunImageUpdater runs the image updater inside the engine's loop until
// ctx ends: every interval (default: u's registry interval) it runs
// UpdateImages over the top-level apps Run manages that carry an
// image-list, with
// the specs Run holds (so an argocd override already held is seen and not
// applied again). report, when set, receives each round's results and
// first error. It returns ctx's error; Run must be running for rounds to
// find apps.
func (e *Engine) RunImageUpdater(ctx context.Context, u *imageupdate.Updater, interval time.Duration, report func([]imageupdate.Result, error)) error {
	if interval <= 0 {
		interval = u.Registry().Interval()
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		res, err := e.UpdateImages(ctx, u, e.imageUpdaterApps())
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
