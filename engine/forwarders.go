package engine

import (
	"context"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/state"
)

// The Engine's methods of the audiences it no longer serves itself,
// kept one release so that hosts keep compiling (CHANGELOG.md): the live
// set (Engine.Apps), the settings that change while it runs
// (Engine.Settings) and the readers of repositories (Engine.Sources).

// AppStatus is Apps.AppStatus.
//
// Deprecated: use Engine.Apps().AppStatus.
func (e *Engine) AppStatus(key v1alpha1.AppKey) (appstatus.Status, bool) {
	return e.Apps().AppStatus(key)
}

// CompareAndUpsert is Apps.CompareAndUpsert.
//
// Deprecated: use Engine.Apps().CompareAndUpsert.
func (e *Engine) CompareAndUpsert(expected *Application, app Application) (bool, error) {
	return e.Apps().CompareAndUpsert(expected, app)
}

// Hint is Apps.Hint.
//
// Deprecated: use Engine.Apps().Hint.
func (e *Engine) Hint(repoURL string) { e.Apps().Hint(repoURL) }

// Invalidate is Apps.Invalidate.
//
// Deprecated: use Engine.Apps().Invalidate.
func (e *Engine) Invalidate(repoURL string) { e.Apps().Invalidate(repoURL) }

// ManagedApp is Apps.ManagedApp.
//
// Deprecated: use Engine.Apps().ManagedApp.
func (e *Engine) ManagedApp(key v1alpha1.AppKey) (Application, bool) { return e.Apps().ManagedApp(key) }

// ManagedApps is Apps.ManagedApps.
//
// Deprecated: use Engine.Apps().ManagedApps.
func (e *Engine) ManagedApps() []v1alpha1.AppKey { return e.Apps().ManagedApps() }

// OnHint is Apps.OnHint.
//
// Deprecated: use Engine.Apps().OnHint.
func (e *Engine) OnHint(notify func(repoURL string)) (stop func()) { return e.Apps().OnHint(notify) }

// OnStatus is Apps.OnStatus.
//
// Deprecated: use Engine.Apps().OnStatus.
func (e *Engine) OnStatus(notify func(key v1alpha1.AppKey, st appstatus.Status)) (stop func()) {
	return e.Apps().OnStatus(notify)
}

// OwnedApps is Apps.OwnedApps.
//
// Deprecated: use Engine.Apps().OwnedApps.
func (e *Engine) OwnedApps() []Application { return e.Apps().OwnedApps() }

// Owns is Apps.Owns.
//
// Deprecated: use Engine.Apps().Owns.
func (e *Engine) Owns(key v1alpha1.AppKey) bool { return e.Apps().Owns(key) }

// Remove is Apps.Remove.
//
// Deprecated: use Engine.Apps().Remove.
func (e *Engine) Remove(key v1alpha1.AppKey) error { return e.Apps().Remove(key) }

// Running is Apps.Running.
//
// Deprecated: use Engine.Apps().Running.
func (e *Engine) Running() bool { return e.Apps().Running() }

// UpdateAppState is Apps.UpdateAppState.
//
// Deprecated: use Engine.Apps().UpdateAppState.
func (e *Engine) UpdateAppState(ctx context.Context, key v1alpha1.AppKey, update func(*state.AppState) (changed bool, err error)) error {
	return e.Apps().UpdateAppState(ctx, key, update)
}

// Upsert is Apps.Upsert.
//
// Deprecated: use Engine.Apps().Upsert.
func (e *Engine) Upsert(app Application) error { return e.Apps().Upsert(app) }

// GnuPGKeyIDs is Settings.GnuPGKeyIDs.
//
// Deprecated: use Engine.Settings().GnuPGKeyIDs.
func (e *Engine) GnuPGKeyIDs() []string { return e.Settings().GnuPGKeyIDs() }

// Options is Settings.Options.
//
// Deprecated: use Engine.Settings().Options.
func (e *Engine) Options() Options { return e.Settings().Options() }

// Project is Settings.Project.
//
// Deprecated: use Engine.Settings().Project.
func (e *Engine) Project(name string) (*Project, error) { return e.Settings().Project(name) }

// Reconfigure is Settings.Reconfigure.
//
// Deprecated: use Engine.Settings().Reconfigure.
func (e *Engine) Reconfigure(ctx context.Context, next Options) ([]string, error) {
	return e.Settings().Reconfigure(ctx, next)
}

// SetClusters is Settings.SetClusters.
//
// Deprecated: use Engine.Settings().SetClusters.
func (e *Engine) SetClusters(ctx context.Context, clusters []ClusterConfig) ([]string, error) {
	return e.Settings().SetClusters(ctx, clusters)
}

// SetGnuPGKeys is Settings.SetGnuPGKeys.
//
// Deprecated: use Engine.Settings().SetGnuPGKeys.
func (e *Engine) SetGnuPGKeys(keys map[string]string) error { return e.Settings().SetGnuPGKeys(keys) }

// SetProjects is Settings.SetProjects.
//
// Deprecated: use Engine.Settings().SetProjects.
func (e *Engine) SetProjects(projects []Project, refused map[string]error) []string {
	return e.Settings().SetProjects(projects, refused)
}

// ChartDependencies is Sources.ChartDependencies.
//
// Deprecated: use Engine.Sources().ChartDependencies.
func (e *Engine) ChartDependencies() render.DependencyFetcher { return e.Sources().ChartDependencies() }

// RepoCredentials is Sources.RepoCredentials.
//
// Deprecated: use Engine.Sources().RepoCredentials.
func (e *Engine) RepoCredentials(app *Application, repoURL string) *source.Credentials {
	return e.Sources().RepoCredentials(app, repoURL)
}

// Source is Sources.Source.
//
// Deprecated: use Engine.Sources().Source.
func (e *Engine) Source(repoURL string) (source.Source, error) { return e.Sources().Source(repoURL) }
