package controller

import (
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// AnnotationDeletionApproved is Argo CD's confirmation of the prunes of
// objects marked Prune=confirm and of the deletions of objects marked
// Delete=confirm (what `argocd app confirm-deletion` writes): an RFC 3339
// time on the Application. It confirms what waits since a time at or
// before it: the operation's start for a prune, the Application's deletion
// for a cascading delete. An older approval confirms nothing, so an
// approval once given does not confirm every later deletion; a value that
// is not a time confirms nothing.
const AnnotationDeletionApproved = "argocd.argoproj.io/deletion-approved"

// deletionApproved reports whether app's approval was given at or after
// since.
func deletionApproved(app *v1alpha1.Application, since time.Time) bool {
	v, ok := app.Annotations[AnnotationDeletionApproved]
	if !ok {
		return false
	}
	at, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return false
	}
	return !at.Before(since.Truncate(time.Second))
}
