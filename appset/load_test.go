package appset

import (
	"errors"
	"strings"
	"testing"
)

func TestLoadArgoExample(t *testing.T) {
	set := loadOne(t, `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: guestbook
  namespace: argocd
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - git:
      repoURL: https://github.com/argoproj/argo-cd.git
      revision: HEAD
      directories:
      - path: applicationset/examples/git-generator-directory/cluster-addons/*
      - path: applicationset/examples/git-generator-directory/cluster-addons/skip
        exclude: true
  template:
    metadata:
      name: '{{.path.basename}}'
    spec:
      project: default
      source:
        repoURL: https://github.com/argoproj/argo-cd.git
        targetRevision: HEAD
        path: '{{.path.path}}'
      destination:
        server: https://kubernetes.default.svc
        namespace: '{{.path.basename}}'
  syncPolicy:
    applicationsSync: create-update
    preserveResourcesOnDeletion: true
`)
	if !set.Spec.GoTemplate || len(set.Spec.Generators[0].Git.Directories) != 2 || !set.Spec.Generators[0].Git.Directories[1].Exclude {
		t.Fatalf("decoded %+v", set.Spec)
	}
	if *set.Spec.SyncPolicy.ApplicationsSync != PolicyCreateUpdate {
		t.Fatal("applicationsSync lost")
	}
}

func TestLoadStrictWithLines(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
		line            int
	}{
		{"unknown field", `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: s}
spec:
  generators:
  - list:
      elements: []
      bogus: 1
  template: {metadata: {name: x}}
`, "spec.generators[0].list.bogus: unknown field", 8},
		{"two kinds in one generator", `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: s}
spec:
  generators:
  - list: {elements: []}
    clusters: {}
  template: {metadata: {name: x}}
`, "want exactly one generator kind, got 2", 6},
		{"matrix of three", `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: s}
spec:
  generators:
  - matrix:
      generators:
      - list: {elements: []}
      - list: {elements: []}
      - list: {elements: []}
  template: {metadata: {name: x}}
`, "exactly two generators, got 3", 7},
		{"matrix nested three levels", `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: s}
spec:
  generators:
  - matrix:
      generators:
      - matrix:
          generators:
          - matrix: {generators: [{list: {}}, {list: {}}]}
          - list: {elements: []}
      - list: {elements: []}
  template: {metadata: {name: x}}
`, "nested more than 2 levels", 10},
		{"templatePatch without goTemplate", `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: s}
spec:
  generators: [{list: {elements: []}}]
  template: {metadata: {name: x}}
  templatePatch: "spec: {}"
`, "needs goTemplate: true", 7},
		{"unknown policy", `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: s}
spec:
  generators: [{list: {elements: []}}]
  template: {metadata: {name: x}}
  syncPolicy:
    applicationsSync: create-everything
`, `unknown policy "create-everything"`, 8},
		{"ignoreApplicationDifferences without a field", `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: s}
spec:
  generators: [{list: {elements: []}}]
  template: {metadata: {name: x}}
  ignoreApplicationDifferences: [{name: x}]
`, "names no field", 7},
		{"ignoreApplicationDifferences bad jq", `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: s}
spec:
  generators: [{list: {elements: []}}]
  template: {metadata: {name: x}}
  ignoreApplicationDifferences: [{jsonPointers: [spec/source]}]
`, "ignoreApplicationDifferences[0].jsonPointers[0]", 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(strings.NewReader(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			var le *LoadError
			if !errors.As(err, &le) || le.Line != tc.line {
				t.Fatalf("err = %v, want line %d", err, tc.line)
			}
		})
	}
}
