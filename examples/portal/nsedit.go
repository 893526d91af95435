package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/kubegitops/gitops"
)

// detectedType is the type of a's first source as its files say, read
// only when body edits Helm or Kustomize fields of a source that has no
// chart and no helm or kustomize block (an auto-detected source); ""
// otherwise or when the source cannot be read.
func (s *server) detectedType(ctx context.Context, a *gitops.Application, body detailsEdit) string {
	if body.HelmParameters == nil && body.HelmValues == nil && body.KustomizeImages == nil {
		return ""
	}
	src := a.Spec.Source
	if len(a.Spec.Sources) > 0 {
		src = &a.Spec.Sources[0]
	}
	if src == nil || src.Chart != "" || src.Helm != nil || src.Kustomize != nil {
		return ""
	}
	t, err := s.sourceTreeOf(ctx, a, *src)
	if err != nil {
		return ""
	}
	return t.Type
}

// detectedAs says what the files of a source were detected as.
func detectedAs(detected string) string {
	if detected == "" {
		return "its files not read"
	}
	return "its files are a " + detected + " source"
}

// editInNamespace writes a details edit to the Application object
// (namespace mode), applied to the object as the API server has it (a
// concurrent write is read again, not lost); the portal serves the object
// written, and the watch the next ones.
func (s *server) editInNamespace(w http.ResponseWriter, r *http.Request, c caller, a *gitops.Application, body detailsEdit, detected string) {
	n, err := s.ns.update(r.Context(), a.Name, func(cur *gitops.Application) error {
		m, err := body.apply(cur, detected)
		if err != nil {
			return err
		}
		*cur = *m
		return cur.Validate()
	})
	if err != nil {
		s.audit.write(c.identity, "details", a, body.changed(), "error: "+err.Error())
		apiError(w, http.StatusBadRequest, fmt.Sprintf("application %s: %v", a.Name, err))
		return
	}
	s.putApp(n)
	s.audit.write(c.identity, "details", n, body.changed(), "done")
	writeJSON(w, http.StatusOK, detailsOf(n, true))
}

// reconcileNow asks for a's comparison after a change the portal made
// (an operation, an action, a deletion of one object): the engine's
// Upsert, or (namespace mode) the refresh annotation for the operator.
func (s *server) reconcileNow(ctx context.Context, a *gitops.Application) {
	if s.ns != nil {
		_ = s.ns.refresh(ctx, a, false)
		return
	}
	_ = s.opts.Engine.Apps().Upsert(*a)
}
