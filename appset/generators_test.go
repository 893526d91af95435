package appset

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

const header = "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: s, namespace: argocd}\nspec:\n"

// repoFixture is a config repository: app folders and cluster configs.
func repoFixture(t testing.TB) Options {
	dir := writeTree(t, map[string]string{
		"apps/guestbook/kustomization.yaml": "resources: []\n",
		"apps/Helm_Guestbook/Chart.yaml":    "name: x\n",
		"apps/skip/cm.yaml":                 "{}\n",
		"apps/.hidden/cm.yaml":              "{}\n",
		"apps/guestbook/nested/cm.yaml":     "{}\n",
		"clusters/dev/config.json":          `{"cluster": {"name": "dev", "address": "https://dev:6443"}, "replicas": 2, "tags": ["a", "b"]}`,
		"clusters/prod/config.yaml":         "cluster:\n  name: prod\n  address: https://prod:6443\nreplicas: 5\ntags: [c]\n",
		"clusters/prod/eu/config.yaml":      "cluster:\n  name: prod-eu\n  address: https://eu:6443\nreplicas: 3\ntags: []\n",
		"lists/teams.yaml":                  "- team: red\n- team: blue\n",
		"clusters/dev/README.md":            "not config\n",
	})
	opts := DefaultOptions()
	opts.Repos = DirRepos(map[string]string{repoURL: dir})
	return opts
}

func TestListGenerator(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		want       map[string]string // app -> spec.destination.namespace
		wantErr    string
	}{
		{"flat elements and values", `  generators:
  - list:
      elements:
      - {cluster: engineering-dev, url: https://1.2.3.4, values: {ns: dev}}
      - {cluster: engineering-prod, url: https://2.4.6.8, values: {ns: prod}}
  template:
    metadata: {name: '{{cluster}}-guestbook'}
    spec:
      project: default
      source: {repoURL: ` + repoURL + `, path: 'apps/{{ cluster }}'}
      destination: {server: '{{url}}', namespace: '{{values.ns}}'}
`, map[string]string{"engineering-dev-guestbook": "dev", "engineering-prod-guestbook": "prod"}, ""},
		{"goTemplate elementsYaml with non-string values", `  goTemplate: true
  generators:
  - list:
      elementsYaml: |
        - {name: a, replicas: 2, ns: {name: one}}
        - {name: b, replicas: 3, ns: {name: two}}
  template:
    metadata: {name: '{{.name}}-{{add .replicas 1}}'}
    spec:
      destination: {server: https://kubernetes.default.svc, namespace: '{{.ns.name}}'}
`, map[string]string{"a-3": "one", "b-4": "two"}, ""},
		{"flat refuses a non-string", `  generators:
  - list:
      elements: [{cluster: a, replicas: 2}]
  template: {metadata: {name: x}}
`, nil, "elements[0].replicas: want a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := loadOne(t, header+tc.spec)
			res, err := Generate(context.Background(), set, DefaultOptions())
			if tc.wantErr != "" {
				var ge *Error
				if !errors.As(err, &ge) || ge.Set != "s" || ge.Generator != 0 || ge.Kind != "list" || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want an *Error naming s, generators[0] (list), %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, a := range res.Applications {
				got[a.GetName()] = field(t, a, "spec", "destination", "namespace")
				if a.GetNamespace() != "argocd" || a.GetKind() != "Application" {
					t.Fatalf("%s: namespace %q kind %q", a.GetName(), a.GetNamespace(), a.GetKind())
				}
			}
			if !mapsEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func clusterSecrets(t testing.TB) StaticClusters {
	var objs []*unstructured.Unstructured
	for _, doc := range []string{
		`{apiVersion: v1, kind: Secret, metadata: {name: c1, namespace: argocd, labels: {argocd.argoproj.io/secret-type: cluster, env: staging}, annotations: {team: red}}, stringData: {name: Staging_1, server: "https://staging:6443", config: "{\"bearerToken\": \"secret\"}"}}`,
		`{apiVersion: v1, kind: Secret, metadata: {name: c2, namespace: argocd, labels: {argocd.argoproj.io/secret-type: cluster, env: prod}}, data: {name: cHJvZA==, server: aHR0cHM6Ly9wcm9kOjY0NDM=}}`,
		`{apiVersion: v1, kind: Secret, metadata: {name: other, namespace: argocd}, stringData: {name: nope, server: "https://nope"}}`,
	} {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	cls, err := ClustersFromSecrets(objs)
	if err != nil {
		t.Fatal(err)
	}
	return StaticClusters(cls)
}

func TestClustersGenerator(t *testing.T) {
	opts := DefaultOptions()
	opts.Clusters = clusterSecrets(t)
	for _, tc := range []struct {
		name, spec string
		want       map[string]string // app -> destination.namespace
	}{
		{"all with the local cluster", `  generators:
  - clusters:
      values: {ns: '{{nameNormalized}}-apps'}
  template:
    metadata: {name: '{{nameNormalized}}-gb'}
    spec: {destination: {server: '{{server}}', namespace: '{{values.ns}}'}}
`, map[string]string{"staging-1-gb": "staging-1-apps", "prod-gb": "prod-apps", "in-cluster-gb": "in-cluster-apps"}},
		{"selector leaves the local cluster out", `  generators:
  - clusters:
      selector: {matchLabels: {env: staging}}
  template:
    metadata: {name: '{{nameNormalized}}'}
    spec: {destination: {server: '{{server}}', namespace: '{{metadata.labels.env}}-{{metadata.annotations.team}}'}}
`, map[string]string{"staging-1": "staging-red"}},
		{"goTemplate metadata and values", `  goTemplate: true
  generators:
  - clusters:
      selector: {matchExpressions: [{key: env, operator: In, values: [prod, staging]}]}
      values: {ns: '{{.metadata.labels.env}}'}
  template:
    metadata: {name: '{{.nameNormalized}}'}
    spec: {destination: {server: '{{.server}}', namespace: '{{.values.ns}}'}}
`, map[string]string{"staging-1": "staging", "prod": "prod"}},
		{"flatList", `  goTemplate: true
  generators:
  - clusters: {flatList: true, selector: {matchLabels: {env: prod}}}
  template:
    metadata: {name: all}
    spec: {destination: {server: '{{(index .clusters 0).server}}', namespace: '{{len .clusters}}'}}
`, map[string]string{"all": "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := generate(t, loadOne(t, header+tc.spec), opts)
			got := map[string]string{}
			for _, a := range res.Applications {
				got[a.GetName()] = field(t, a, "spec", "destination", "namespace")
			}
			if !mapsEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	for _, a := range generate(t, loadOne(t, header+`  generators: [{clusters: {}}]
  template: {metadata: {name: '{{nameNormalized}}'}, spec: {destination: {server: '{{server}}'}}}
`), opts).Applications {
		if js, _ := a.MarshalJSON(); strings.Contains(string(js), "secret") {
			t.Fatalf("a cluster's credentials leaked into %s", js)
		}
	}
}

func TestGitDirectoriesGenerator(t *testing.T) {
	opts := repoFixture(t)
	for _, tc := range []struct {
		name, spec string
		want       map[string]string // app -> source.path
	}{
		{"fasttemplate path params with exclude", `  generators:
  - git:
      repoURL: ` + repoURL + `
      revision: HEAD
      directories:
      - path: apps/*
      - path: apps/skip
        exclude: true
  template:
    metadata: {name: '{{path.basenameNormalized}}'}
    spec: {source: {repoURL: ` + repoURL + `, path: '{{path}}', targetRevision: '{{path[0]}}-{{path.basename}}'}}
`, map[string]string{"guestbook": "apps/guestbook", "helm-guestbook": "apps/Helm_Guestbook"}},
		{"goTemplate segments and pathParamPrefix", `  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - git:
      repoURL: ` + repoURL + `
      pathParamPrefix: app
      directories: [{path: 'apps/*/*'}]
  template:
    metadata: {name: '{{.app.path.basename}}-{{index .app.path.segments 1}}'}
    spec: {source: {path: '{{.app.path.path}}'}}
`, map[string]string{"nested-guestbook": "apps/guestbook/nested"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := generate(t, loadOne(t, header+tc.spec), opts)
			got := map[string]string{}
			for _, a := range res.Applications {
				got[a.GetName()] = field(t, a, "spec", "source", "path")
			}
			if !mapsEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestGitFilesGenerator(t *testing.T) {
	opts := repoFixture(t)
	for _, tc := range []struct {
		name, spec string
		want       map[string]string // app -> destination.server
	}{
		{"flattened keys and ** globs", `  generators:
  - git:
      repoURL: ` + repoURL + `
      files:
      - path: 'clusters/**/config.*'
      - path: clusters/prod/eu/config.yaml
        exclude: true
  template:
    metadata: {name: '{{cluster.name}}-{{replicas}}-{{tags.0}}'}
    spec: {destination: {server: '{{cluster.address}}', namespace: '{{path.basename}}-{{path.filenameNormalized}}'}}
`, map[string]string{"dev-2-a": "https://dev:6443", "prod-5-c": "https://prod:6443"}},
		{"goTemplate nested keys, lists in a file", `  goTemplate: true
  generators:
  - git:
      repoURL: ` + repoURL + `
      files: [{path: 'clusters/*/*/config.yaml'}, {path: lists/teams.yaml}]
  template:
    metadata: {name: '{{if .cluster}}{{.cluster.name}}-{{mul .replicas 2}}{{else}}{{.team}}-{{.path.filename | trimSuffix ".yaml"}}{{end}}'}
    spec: {destination: {server: '{{if .cluster}}{{.cluster.address}}{{else}}{{.path.path}}{{end}}'}}
`, map[string]string{"prod-eu-6": "https://eu:6443", "red-teams": "lists", "blue-teams": "lists"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := generate(t, loadOne(t, header+tc.spec), opts)
			got := map[string]string{}
			for _, a := range res.Applications {
				got[a.GetName()] = field(t, a, "spec", "destination", "server")
			}
			if !mapsEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMatrixGenerator(t *testing.T) {
	opts := repoFixture(t)
	opts.Clusters = clusterSecrets(t)
	// Git directories x clusters: every app on every selected cluster.
	res := generate(t, loadOne(t, header+`  generators:
  - matrix:
      generators:
      - git: {repoURL: `+repoURL+`, directories: [{path: apps/*}, {path: apps/skip, exclude: true}]}
      - clusters: {selector: {matchLabels: {argocd.argoproj.io/secret-type: cluster}}}
  template:
    metadata: {name: '{{path.basenameNormalized}}-{{nameNormalized}}'}
    spec: {destination: {server: '{{server}}'}}
`), opts)
	want := []string{"guestbook-prod", "guestbook-staging-1", "helm-guestbook-prod", "helm-guestbook-staging-1"}
	if got := names(res.Applications); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// The second generator uses the first's parameters: a git files path
	// from a list element, and a list rendered from a git file.
	res = generate(t, loadOne(t, header+`  goTemplate: true
  generators:
  - matrix:
      generators:
      - list: {elements: [{env: dev}, {env: prod}]}
      - git: {repoURL: `+repoURL+`, files: [{path: 'clusters/{{.env}}/config.*'}]}
  - matrix:
      generators:
      - git: {repoURL: `+repoURL+`, files: [{path: lists/teams.yaml}]}
      - list:
          elementsYaml: '[{"tier": "{{.team}}-a"}, {"tier": "{{.team}}-b"}]'
  template:
    metadata: {name: '{{if .env}}{{.env}}-{{.cluster.name}}{{else}}{{.tier}}{{end}}'}
    spec: {destination: {server: '{{.path.path}}'}}
`), opts)
	want = []string{"blue-a", "blue-b", "dev-dev", "prod-prod", "red-a", "red-b"}
	if got := names(res.Applications); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// Either side may use the other's parameters: here the first.
	res = generate(t, loadOne(t, header+`  goTemplate: true
  generators:
  - matrix:
      generators:
      - git: {repoURL: `+repoURL+`, files: [{path: 'clusters/{{.env}}/config.*'}]}
      - list: {elements: [{env: dev}, {env: prod}]}
  template:
    metadata: {name: '{{.env}}-{{.cluster.name}}'}
`), opts)
	if got := names(res.Applications); !slices.Equal(got, []string{"dev-dev", "prod-prod"}) {
		t.Fatalf("first using the second's parameters: %v", got)
	}
	// Both sides using parameters is a loop.
	_, err := Generate(context.Background(), loadOne(t, header+`  goTemplate: true
  generators:
  - matrix:
      generators:
      - list: {elementsYaml: '[{"a": "{{.b}}"}]'}
      - list: {elementsYaml: '[{"b": "{{.a}}"}]'}
  template: {metadata: {name: x}}
`), opts)
	var ge *Error
	if !errors.Is(err, ErrTemplateLoop) || !errors.As(err, &ge) || ge.Kind != "matrix" {
		t.Fatalf("a matrix whose sides use each other: %v", err)
	}
	// Under fasttemplate a key both sides have with different values is
	// an error naming the set and generator.
	_, err = Generate(context.Background(), loadOne(t, header+`  generators:
  - matrix:
      generators:
      - list: {elements: [{env: dev}]}
      - list: {elements: [{env: prod}]}
  template: {metadata: {name: '{{env}}'}}
`), opts)
	if !errors.As(err, &ge) || ge.Kind != "matrix" || !strings.Contains(err.Error(), `parameter "env" has two values`) {
		t.Fatalf("err = %v", err)
	}
}

func TestMergeGenerator(t *testing.T) {
	opts := DefaultOptions()
	opts.Clusters = clusterSecrets(t)
	res := generate(t, loadOne(t, header+`  goTemplate: true
  generators:
  - merge:
      mergeKeys: [server]
      generators:
      - clusters: {values: {kafka: "true", redis: "false"}}
      - clusters:
          selector: {matchLabels: {env: prod}}
          values: {redis: "true"}
      - list:
          elements: [{server: https://kubernetes.default.svc, values: {kafka: "false", redis: "false"}}, {server: https://unknown, values: {kafka: "x"}}]
  template:
    metadata: {name: '{{.nameNormalized}}'}
    spec: {destination: {server: '{{.server}}', namespace: 'kafka-{{.values.kafka}}-redis-{{.values.redis}}'}}
`), opts)
	got := map[string]string{}
	for _, a := range res.Applications {
		got[a.GetName()] = field(t, a, "spec", "destination", "namespace")
	}
	want := map[string]string{"in-cluster": "kafka-false-redis-false", "prod": "kafka-true-redis-true", "staging-1": "kafka-true-redis-false"}
	if !mapsEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	_, err := Generate(context.Background(), loadOne(t, header+`  generators:
  - merge:
      mergeKeys: [k]
      generators:
      - list: {elements: [{k: a}, {k: a}]}
      - list: {elements: [{k: a}]}
  template: {metadata: {name: '{{k}}'}}
`), opts)
	if err == nil || !strings.Contains(err.Error(), "two parameter sets with merge key") {
		t.Fatalf("err = %v", err)
	}
}

func TestSelectorOnAnyGenerator(t *testing.T) {
	opts := repoFixture(t)
	res := generate(t, loadOne(t, header+`  goTemplate: true
  generators:
  - git:
      repoURL: `+repoURL+`
      files: [{path: 'clusters/**/config.*'}]
    selector:
      matchExpressions: [{key: cluster.name, operator: NotIn, values: [dev]}, {key: path.basename, operator: Exists}]
  - list: {elements: [{cluster: {name: xa}, env: a}, {cluster: {name: yb}, env: b}]}
    selector: {matchLabels: {env: b}}
  template:
    metadata: {name: '{{.cluster.name}}'}
`), opts)
	want := []string{"prod", "prod-eu", "yb"}
	if got := names(res.Applications); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
