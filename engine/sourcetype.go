package engine

import (
	"context"
	"fmt"

	"github.com/kubegitops/gitops/render"
)

// SourceType returns the tool that renders the app's single source, named
// as Argo CD's status.sourceType names it: "Helm", "Kustomize", "Plugin",
// or "Directory" (plain manifests and Jsonnet, which Argo CD renders as a
// directory source). The tool is the one a render picks (a chart, a plugin,
// else the files at the source's path: render.Detect), so the app is
// rendered as Render renders it (a render cache hit after a Render of the
// same revision). An app without exactly one source is refused.
func (ops Ops) SourceType(ctx context.Context, app *Application) (string, error) {
	e := ops.e

	if app.Spec.Source == nil || len(app.Spec.Sources) > 0 {
		return "", fmt.Errorf("application %q: a source type is that of a single-source application", app.Name)
	}
	r, err := e.renderNow(ctx, app)
	if err != nil {
		return "", err
	}
	if len(r.Tools) != 1 {
		return "", fmt.Errorf("application %q: its source rendered with %d tools", app.Name, len(r.Tools))
	}
	switch r.Tools[0] {
	case render.KindHelm:
		return "Helm", nil
	case render.KindKustomize:
		return "Kustomize", nil
	case render.KindPlugin:
		return "Plugin", nil
	default:
		return "Directory", nil
	}
}
