package engine

import (
	"context"
	"fmt"
	"sort"

	"github.com/kubegitops/gitops/engine/internal/desired"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/integrity"
)

// SourceIntegrityError is the error of a sync refused because the app's
// sources fail its project's source integrity criteria (AppProject
// sourceIntegrity, signatureKeys): its message is Argo CD's
// ComparisonError message ("GIT/GPG: Failed verifying revision ...").
type SourceIntegrityError = integrity.Error

// GnuPGKeyError names an entry of Options.GnuPGKeys (argocd-gpg-keys-cm)
// that could not be read and is left out.
type GnuPGKeyError = integrity.KeyError

// SetGnuPGKeys replaces the GnuPG public keys signatures are verified
// against (Options.GnuPGKeys: argocd-gpg-keys-cm's data, key ID to
// ASCII-armored public key), while the engine runs. Entries that cannot be
// read are left out and named in the error (*GnuPGKeyError each); the
// others apply. While Run runs, the apps whose project has source
// integrity criteria are refreshed at once.
func (set Settings) SetGnuPGKeys(keys map[string]string) error {
	e := set.e

	ring, err := integrity.ParseKeyRing(keys)
	e.integrity.SetKeyRing(ring)
	var names []string
	e.projects.mu.RLock()
	for name, p := range e.projects.byName {
		if p.EffectiveSourceIntegrity() != nil {
			names = append(names, name)
		}
	}
	e.projects.mu.RUnlock()
	sort.Strings(names)
	e.requeueProjects(names)
	return err
}

// GnuPGKeyIDs are the IDs of the GnuPG keys signatures are verified
// against, sorted.
func (set Settings) GnuPGKeyIDs() []string {
	e := set.e
	return e.integrity.KeyRing().KeyIDs()
}

// verifySources verifies the app's sources at revs (in order) against its
// project's source integrity criteria (package source/integrity): nil
// when the sources pass or no criteria apply, a *SourceIntegrityError when
// they fail, another error when the criteria cannot be applied. fresh
// (a hard refresh) lists signatures again.
func (e *Engine) verifySources(ctx context.Context, app *Application, proj *Project, revs []source.Revision, fresh bool) error {
	si := proj.EffectiveSourceIntegrity()
	if si == nil {
		return nil
	}
	srcs := app.Spec.AllSources()
	if len(revs) != len(srcs) {
		return fmt.Errorf("source integrity: %d revisions for %d sources", len(revs), len(srcs))
	}
	req := integrity.Request{Criteria: si, Fresh: fresh}
	for i, src := range srcs {
		in := integrity.Input{Label: integrity.SourceLabel(src.Name, i, len(srcs)), RepoURL: src.RepoURL, Chart: src.Chart != "", Revision: revs[i]}
		if !in.Chart {
			got, repo, err := e.sources.Of(desired.ProjectName(app), src)
			if err != nil {
				return err
			}
			in.Source, in.Repository = got, repo
		}
		req.Sources = append(req.Sources, in)
	}
	res, err := e.integrity.Verify(ctx, req)
	if err != nil {
		return fmt.Errorf("source integrity: %w", err)
	}
	return res.Err()
}
