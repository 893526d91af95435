package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/internal/chartserver"
	"github.com/kubegitops/gitops/source/helmrepo"
	"github.com/kubegitops/gitops/source/repocreds"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An umbrella chart in a public chart repository depends on a chart of a
// private one whose repository Secret is scoped to project a: the app of
// a renders both, and an app of project b of the same name, chart and
// destination (the same render cache key but for the project) is refused
// at the dependency, with an error naming it and never the password.
func TestChartDependencyCredentialsAreScopedToTheProject(t *testing.T) {
	t.Parallel()
	const password = "deps-SECRET-pw"
	private := chartserver.New(t, chartserver.Options{Username: "deps", Password: password})
	private.Add(chartserver.Chart(t, "sub", "0.1.0", map[string]string{
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-sub\n",
	}))
	public := chartserver.New(t, chartserver.Options{})
	public.Add(chartserver.Chart(t, "umbrella", "1.0.0", map[string]string{
		"Chart.yaml":        "apiVersion: v2\nname: umbrella\nversion: 1.0.0\ndependencies:\n- name: sub\n  version: 0.1.0\n  repository: " + private.URL + "\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-umbrella\n",
	}))
	store, err := repocreds.Load("repos.yaml", []byte(fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: deps, namespace: argocd, labels: {argocd.argoproj.io/secret-type: repository}}
stringData: {url: %q, type: helm, username: deps, password: %s, project: a}
`, private.URL, password)))
	if err != nil {
		t.Fatal(err)
	}
	hopts := helmrepo.DefaultOptions()
	hopts.CacheDir = t.TempDir()
	charts, err := helmrepo.New(hopts)
	if err != nil {
		t.Fatal(err)
	}
	e := offlineEngine(t, func(o *Options) {
		o.ChartSource = charts
		o.ProjectCredentials = store.ForProject
		for _, name := range []string{"a", "b"} {
			o.Projects = append(o.Projects, Project{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: ProjectSpec{SourceRepos: []string{"*"},
				Destinations: []ApplicationDestination{{Name: "*", Server: "*", Namespace: "*"}}}})
		}
	})
	appOf := func(project string) *Application {
		a := &Application{Spec: ApplicationSpec{Project: project,
			Source:      &ApplicationSource{RepoURL: public.URL, Chart: "umbrella", TargetRevision: "1.0.0"},
			Destination: ApplicationDestination{Name: "prod", Namespace: "shop"},
		}}
		a.Name = "umb"
		return a
	}
	objs, _, err := e.Render(context.Background(), appOf("a"))
	if err != nil || len(objs) != 2 {
		t.Fatalf("the app of project a: %d objects, %v; want the umbrella's and the dependency's", len(objs), err)
	}
	_, _, err = e.Render(context.Background(), appOf("b"))
	if err == nil {
		t.Fatal("an app of project b rendered a dependency fetched with the Secret scoped to project a")
	}
	if msg := err.Error(); !strings.Contains(msg, "dependency sub") || !strings.Contains(msg, private.URL) || strings.Contains(msg, password) {
		t.Fatalf("the refusal must name the dependency and its repository, never the password: %v", err)
	}
	// Project a's render is still served (from the cache or again).
	if objs, _, err := e.Render(context.Background(), appOf("a")); err != nil || len(objs) != 2 {
		t.Fatalf("the app of project a after b's refusal: %d objects, %v", len(objs), err)
	}
}
