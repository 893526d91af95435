package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/kubegitops/gitops/render"
)

// The lean core renders plain manifests by itself; an app of a tool no
// Toolkit provides fails with render.ErrNoRenderer naming the tool, never
// renders as plain.
func TestLeanCoreRendersPlainAndNamesAMissingTool(t *testing.T) {
	t.Parallel()
	dir := repoDir(t, map[string]string{
		"app/web.yaml":            webApp,
		"chart/Chart.yaml":        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
		"chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
	})
	opts := DefaultOptions()
	opts.Clusters = []ClusterConfig{{Name: "prod", Server: "https://prod.invalid", KubeVersion: "1.31.0"}}
	e, err := New(opts) // no Toolkit
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	app := dirApp("plain", dir, "shop")
	app.Spec.Destination = ApplicationDestination{Name: "prod", Namespace: "shop"}
	if objs, _, err := e.Render(context.Background(), app); err != nil || len(objs) != 2 {
		t.Fatalf("plain render in the lean core: %d objects, %v", len(objs), err)
	}
	chart := dirApp("chart", dir, "shop")
	chart.Spec.Source.Path = "chart"
	chart.Spec.Destination = app.Spec.Destination
	_, _, err = e.Render(context.Background(), chart)
	var re *render.Error
	if !errors.Is(err, render.ErrNoRenderer) || !errors.As(err, &re) || re.Tool != render.KindHelm {
		t.Fatalf("chart in the lean core: %v, want ErrNoRenderer naming helm", err)
	}
}
