package hydrator

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// Begin marks app's hydration as running (phase Hydrating, with the
// spec.sourceHydrator it uses), as Argo CD does before it renders. An
// operation already Hydrating keeps its start.
func Begin(app *v1alpha1.Application, now time.Time) {
	st := &app.Status.SourceHydrator
	started := metav1.NewTime(now)
	if cur := st.CurrentOperation; cur != nil && cur.Phase == v1alpha1.HydrateOperationPhaseHydrating {
		started = cur.StartedAt
	}
	st.CurrentOperation = &v1alpha1.HydrateOperation{StartedAt: started, Phase: v1alpha1.HydrateOperationPhaseHydrating,
		SourceHydrator: *app.Spec.SourceHydrator.DeepCopy()}
}

// Finish records o, the outcome of the hydration Begin started, in app's
// status.sourceHydrator as Argo CD does: Hydrated with the dry and
// hydrated commits (also the last successful operation), or Failed with
// "Failed to hydrate: <reason>"; the dry commit rendered is the last
// compared either way.
func Finish(app *v1alpha1.Application, o Outcome, now time.Time) {
	st := &app.Status.SourceHydrator
	if st.CurrentOperation == nil {
		Begin(app, now)
	}
	cur := st.CurrentOperation
	finished := metav1.NewTime(now)
	cur.FinishedAt = &finished
	if o.DrySHA != "" {
		cur.DrySHA = o.DrySHA
		st.LastComparedDryRevision = o.DrySHA
	}
	if err := o.ErrorFor(v1alpha1.KeyOf(app)); err != nil {
		cur.Phase = v1alpha1.HydrateOperationPhaseFailed
		cur.Message = fmt.Sprintf("Failed to hydrate: %v", err)
		return
	}
	cur.Phase = v1alpha1.HydrateOperationPhaseHydrated
	cur.Message = ""
	cur.HydratedSHA = o.HydratedSHA
	st.LastSuccessfulOperation = &v1alpha1.SuccessfulHydrateOperation{DrySHA: o.DrySHA, HydratedSHA: o.HydratedSHA,
		SourceHydrator: *cur.SourceHydrator.DeepCopy()}
}
