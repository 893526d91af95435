package engine

import (
	"context"
	"errors"
	"github.com/kubegitops/gitops/appstatus"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/internal/chartserver"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/builtin"
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

// An engine built by New alone has no chart source (Helm's registry client
// stays out of the lean core): an app with a chart source is refreshed to
// a ComparisonError whose error wraps ErrNoChartSource and names the
// source and the options that plug one in, and the chart repository is
// never asked; nothing renders as empty. The same app through the root's
// batteries (helmrepo.ChartSource as NewChartSource) renders the chart.
func TestLeanCoreNamesAMissingChartSource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := chartserver.New(t, chartserver.Options{})
	repo.Add(chartserver.WebChart(t, "web", "1.0.0"))
	ns := cluster.TestNamespace(t)
	app := &Application{Spec: ApplicationSpec{
		Source:      &ApplicationSource{RepoURL: repo.URL, Chart: "web", TargetRevision: "1.0.0"},
		Destination: ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns},
	}}
	app.Name = ns
	opts := DefaultOptions()
	opts.Clusters = []ClusterConfig{{Name: "in-cluster", Server: "https://kubernetes.default.svc", Config: cluster.Config()}}
	opts.Toolkit = builtin.Tools // the renderers, but no chart source
	lean, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer lean.Close()
	st, err := lean.Refresh(ctx, app)
	if !errors.Is(err, ErrNoChartSource) {
		t.Fatalf("refresh of a chart app in the lean core: %v, want ErrNoChartSource", err)
	}
	var cond *appstatus.Condition
	for i := range st.Conditions {
		if st.Conditions[i].Type == appstatus.ConditionComparisonError {
			cond = &st.Conditions[i]
		}
	}
	if cond == nil || !errors.Is(cond.Err, ErrNoChartSource) || !strings.Contains(cond.Message, repo.URL+" chart web") ||
		!strings.Contains(cond.Message, "Options.NewChartSource") {
		t.Fatalf("conditions %+v: want a ComparisonError naming the chart source and the option to set", st.Conditions)
	}
	if n := repo.Requests("/index.yaml"); n != 0 {
		t.Fatalf("the lean core asked the chart repository %d times", n)
	}

	full, err := newWithBuiltins(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	objs, _, err := full.Render(ctx, app)
	if err != nil || len(objs) == 0 {
		t.Fatalf("the same app with the root's chart source: %d objects, %v", len(objs), err)
	}
}
