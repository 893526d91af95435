package controller

import (
	"strconv"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// AnnotationSkipReconcile is Argo CD's argocd.argoproj.io/skip-reconcile:
// an Application whose value parses as true is not processed at all.
const AnnotationSkipReconcile = "argocd.argoproj.io/skip-reconcile"

// skipReconcile reports whether app asks not to be reconciled, as Argo
// CD's application controller reads it (canProcessApp): the annotation's
// value parsed as a Go bool is true. Such an app is neither refreshed,
// synced nor finalized, and its status is left as it is (absent for a
// new app); removing the annotation, or setting it to "false", resumes
// it. A value that is no bool is ignored, as in Argo CD.
func skipReconcile(app *v1alpha1.Application) bool {
	v, ok := app.Annotations[AnnotationSkipReconcile]
	if !ok {
		return false
	}
	skip, err := strconv.ParseBool(v)
	return err == nil && skip
}
