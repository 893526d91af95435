package preview

import (
	"context"
	"fmt"
	"testing"
	"testing/fstest"

	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/git"
)

// appsURL is the URL the fixture's Applications name their repository
// by; the preview reads it from the Git server (Options.RepoURL).
const appsURL = "https://git.example.com/org/fleet.git"

// fixture is a repository of 35 apps on a real Git server: 8 Kustomize
// overlays of a shared base and one standalone overlay, 10 plain apps,
// 4 Helm apps whose values come from a second source, an ApplicationSet
// of a list (3 apps) and one of the envs/* folders (6 apps), and an app
// of apps with 2 children.
func fixture() fstest.MapFS {
	fs := fstest.MapFS{}
	put := func(name, data string) { fs[name] = &fstest.MapFile{Data: []byte(data)} }
	put("README.md", "fleet\n")
	put("base/kustomization.yaml", "resources:\n- deployment.yaml\n")
	put("base/deployment.yaml", deployment("web", 1))
	var apps string
	app := func(name, spec string) {
		apps += fmt.Sprintf("---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: %s\nspec:\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: %s\n%s", name, name, spec)
	}
	src := func(path string) string {
		return fmt.Sprintf("  source:\n    repoURL: %s\n    targetRevision: main\n    path: %s\n", appsURL, path)
	}
	for i := 1; i <= 8; i++ {
		put(fmt.Sprintf("overlays/k%d/kustomization.yaml", i), fmt.Sprintf("namePrefix: k%d-\nresources:\n- ../../base\n", i))
		app(fmt.Sprintf("k%d", i), src(fmt.Sprintf("overlays/k%d", i)))
	}
	put("overlays/solo/kustomization.yaml", "resources:\n- deployment.yaml\n")
	put("overlays/solo/deployment.yaml", deployment("solo", 1))
	app("solo", src("overlays/solo"))
	for i := 1; i <= 10; i++ {
		put(fmt.Sprintf("plain/p%d/cm.yaml", i), configMap(fmt.Sprintf("p%d", i), "v1"))
		app(fmt.Sprintf("p%d", i), src(fmt.Sprintf("plain/p%d", i)))
	}
	put("charts/web/Chart.yaml", "apiVersion: v2\nname: web\nversion: 0.1.0\n")
	put("charts/web/values.yaml", "replicas: 1\ncolor: blue\n")
	put("charts/web/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-web\ndata:\n  color: {{ .Values.color | quote }}\n  replicas: {{ .Values.replicas | quote }}\n")
	for i := 1; i <= 4; i++ {
		put(fmt.Sprintf("values/h%d.yaml", i), fmt.Sprintf("color: c%d\n", i))
		app(fmt.Sprintf("h%d", i), fmt.Sprintf(`  sources:
  - repoURL: %[1]s
    targetRevision: main
    path: charts/web
    helm:
      valueFiles:
      - $values/values/h%[2]d.yaml
  - repoURL: %[1]s
    targetRevision: main
    ref: values
`, appsURL, i))
	}
	app("root", src("children"))
	put("children/c1.yaml", childApp("c1", "plain/p1"))
	put("children/c2.yaml", childApp("c2", "plain/p2"))
	put("apps/apps.yaml", apps)
	put("apps/appsets.yaml", listSet("a", "b", "c")+envSet)
	for i := 1; i <= 6; i++ {
		put(fmt.Sprintf("envs/e%d/cm.yaml", i), configMap(fmt.Sprintf("e%d", i), "v1"))
	}
	return fs
}

func deployment(name string, replicas int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
spec:
  replicas: %[2]d
  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      containers:
      - name: web
        image: nginx:1.27
`, name, replicas)
}

func configMap(name, value string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  value: %q\n", name, value)
}

func childApp(name, path string) string {
	return fmt.Sprintf("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: %s\nspec:\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: %s\n  source:\n    repoURL: %s\n    targetRevision: main\n    path: %s\n", name, name, appsURL, path)
}

func listSet(names ...string) string {
	s := "---\napiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: list\nspec:\n  generators:\n  - list:\n      elements:\n"
	for _, n := range names {
		s += fmt.Sprintf("      - name: %s\n", n)
	}
	return s + fmt.Sprintf(`  template:
    metadata:
      name: 'list-{{name}}'
    spec:
      destination:
        server: https://kubernetes.default.svc
        namespace: 'list-{{name}}'
      source:
        repoURL: %s
        targetRevision: main
        path: plain/p3
`, appsURL)
}

var envSet = fmt.Sprintf(`---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: envs
spec:
  generators:
  - git:
      repoURL: %[1]s
      revision: main
      directories:
      - path: envs/*
  template:
    metadata:
      name: 'env-{{path.basename}}'
    spec:
      destination:
        server: https://kubernetes.default.svc
        namespace: 'env-{{path.basename}}'
      source:
        repoURL: %[1]s
        targetRevision: main
        path: '{{path}}'
`, appsURL)

// repo is one fixture repository on a Git server, with its first commit.
type repo struct {
	gs    *gitserver.Server
	name  string
	first string
}

func newRepo(t testing.TB, files fstest.MapFS) *repo {
	t.Helper()
	gs, first := testfiles.GitRepo(t, gitserver.DefaultOptions(), "fleet", files)
	return &repo{gs: gs, name: "fleet", first: first}
}

func (r *repo) commit(t testing.TB, changes map[string]string) string {
	t.Helper()
	m := map[string][]byte{}
	for k, v := range changes {
		if v == "" {
			m[k] = nil
		} else {
			m[k] = []byte(v)
		}
	}
	c, err := r.gs.Commit(context.Background(), r.name, "change", m)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// options previews base..head of the repository with the fixture's app
// files.
func (r *repo) options(t testing.TB, base, head string) Options {
	t.Helper()
	src, err := git.New(git.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Source = src
	o.Repository = source.Repository{URL: r.gs.RepoURL(r.name)}
	o.RepoURL = appsURL
	o.Base, o.Head = base, head
	o.Branch = "main"
	o.Apps = []string{"apps"}
	return o
}
