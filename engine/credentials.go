package engine

import (
	"github.com/kubegitops/gitops/engine/internal/desired"
	"github.com/kubegitops/gitops/source"
)

// appCredentials returns the credentials lookup of the fetches made for an
// app of a project: Options.ProjectCredentials, else Options.Credentials
// whatever the project, else nil (none).
func appCredentials(opts Options) func(project, repoURL string) *source.Credentials {
	if opts.ProjectCredentials != nil {
		return opts.ProjectCredentials
	}
	if creds := opts.Credentials; creds != nil {
		return func(_, repoURL string) *source.Credentials { return creds(repoURL) }
	}
	return nil
}

// unscopedCredentials returns the credentials lookup of the fetches made
// for no app (ApplicationSet git generators): Options.Credentials, else
// Options.ProjectCredentials with project "", which a repository scoped to
// a project never serves, else nil (none).
func unscopedCredentials(opts Options) func(repoURL string) *source.Credentials {
	if opts.Credentials != nil || opts.ProjectCredentials == nil {
		return opts.Credentials
	}
	pc := opts.ProjectCredentials
	return func(repoURL string) *source.Credentials { return pc("", repoURL) }
}

// RepoCredentials returns the credentials with which app (through its
// project, Options.ProjectCredentials) reads repoURL, as the engine
// fetches it; nil when there are none. An add-on that writes to an app's
// repository (the image updater's git write-back) uses the same ones.
func (srcs Sources) RepoCredentials(app *Application, repoURL string) *source.Credentials {
	e := srcs.e

	if creds := appCredentials(e.opts); creds != nil {
		return creds(desired.ProjectName(app), repoURL)
	}
	return nil
}
