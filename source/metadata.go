package source

import (
	"context"
	"time"
)

// RevisionMetadata is what a person wrote with a commit: Argo CD's
// RevisionMetadata (the repo server's GetRevisionMetadata), without tags
// and signature.
type RevisionMetadata struct {
	// Author is "Name <email>".
	Author string `json:"author"`
	// Date is the author's date.
	Date time.Time `json:"date"`
	// Message is the whole commit message.
	Message string `json:"message"`
}

// MetadataSource is a Source that can tell a revision's metadata
// (source/git implements it). A commit never changes, so callers may cache
// the answer by repository URL and commit for good.
type MetadataSource interface {
	RevisionMetadata(ctx context.Context, repo Repository, rev Revision) (RevisionMetadata, error)
}
