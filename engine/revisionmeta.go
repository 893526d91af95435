package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/kubegitops/gitops/engine/internal/desired"
	"github.com/kubegitops/gitops/source"
)

// ErrNoRevisionMetadata is returned by RevisionMetadata for a source that
// keeps no commit metadata (a Helm chart, a plain folder).
var ErrNoRevisionMetadata = errors.New("the source keeps no revision metadata")

// RevisionMetadata returns the author, date and message of commit (a full
// commit id, as Status.Revision and appstatus.HistoryEntry.Revisions hold) of src, a
// source of app, through the engine's own source of that repository and
// the credentials an app of app's project reads it with (Argo CD's
// GetRevisionMetadata). A commit never changes: callers should cache the
// answer by project, repository and commit.
func (ops Ops) RevisionMetadata(ctx context.Context, app *Application, src ApplicationSource, commit string) (source.RevisionMetadata, error) {
	e := ops.e

	if src.Chart != "" {
		return source.RevisionMetadata{}, fmt.Errorf("%s chart %s: %w", source.RedactURL(src.RepoURL), src.Chart, ErrNoRevisionMetadata)
	}
	s, repo, err := e.sources.Of(desired.ProjectName(app), src)
	if err != nil {
		return source.RevisionMetadata{}, err
	}
	ms, ok := s.(source.MetadataSource)
	if !ok {
		return source.RevisionMetadata{}, fmt.Errorf("%s: %w", source.RedactURL(src.RepoURL), ErrNoRevisionMetadata)
	}
	return ms.RevisionMetadata(ctx, repo, source.Revision{Commit: commit})
}
