package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/kubegitops/gitops/internal/chartserver"
	"github.com/kubegitops/gitops/source/helmrepo"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A Kustomize app's helmCharts are inflated by the engine's in-process
// Helm, with the chart fetched through the engine's chart source, and only
// from a repository the app's project admits.
func TestKustomizeHelmChartsFollowTheProjectsRepositories(t *testing.T) {
	repo := chartserver.New(t, chartserver.Options{})
	repo.Add(chartserver.WebChart(t, "web", "1.0.0"))
	dir := repoDir(t, map[string]string{"app/kustomization.yaml": "namespace: shop\nhelmCharts:\n- {name: web, repo: " + repo.URL + ", version: 1.0.0, releaseName: shop, valuesInline: {greeting: hi}}\n"})
	hopts := helmrepo.DefaultOptions()
	hopts.CacheDir = t.TempDir()
	charts, err := helmrepo.New(hopts)
	if err != nil {
		t.Fatal(err)
	}
	project := func(repos ...string) Project {
		p := Project{Spec: ProjectSpec{SourceRepos: repos, Destinations: []ApplicationDestination{{Server: "*", Namespace: "*"}}}}
		p.Name = "team"
		return p
	}
	app := dirApp("shop", dir, "shop")
	app.Spec.Destination = ApplicationDestination{Name: "prod", Namespace: "shop"}
	app.Spec.Project = "team"

	refused := offlineEngine(t, func(o *Options) { o.ChartSource = charts; o.Projects = []Project{project(dir)} })
	_, _, err = refused.Render(context.Background(), app)
	var perr *PolicyError
	if !errors.As(err, &perr) || perr.Rule != "sourceRepos" {
		t.Fatalf("a chart from a repository the project does not list: %v", err)
	}
	if repo.ArchiveRequests() != 0 {
		t.Fatalf("the refused chart was downloaded")
	}

	admitted := offlineEngine(t, func(o *Options) { o.ChartSource = charts; o.Projects = []Project{project(dir, repo.URL)} })
	objs, _, err := admitted.Render(context.Background(), app)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, o := range objs {
		if o.GetKind() == "ConfigMap" && o.GetName() == "shop-settings" {
			v, _, _ := unstructured.NestedString(o.Object, "data", "greeting")
			found = v == "hi"
		}
	}
	if !found || len(objs) < 2 {
		t.Fatalf("the inflated chart: %d objects, ConfigMap with the inline value: %v", len(objs), found)
	}
}
