package appset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubegitops/gitops/source"
)

func TestTemplates(t *testing.T) {
	opts := DefaultOptions()
	res := generate(t, loadOne(t, header+`  generators:
  - list:
      elements: [{app: one}]
  - list:
      elements: [{app: two}]
      template:
        metadata:
          labels: {tier: '{{app}}'}
        spec:
          source: {path: 'override/{{app}}'}
  template:
    metadata:
      name: '{{app}}'
      labels: {team: red, tier: base}
      finalizers: [resources-finalizer.argocd.argoproj.io]
    spec:
      project: default
      source: {repoURL: `+repoURL+`, path: 'base/{{app}}', targetRevision: '{{ unknown }}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{app}}'}
`), opts)
	one, two := res.Applications[0], res.Applications[1]
	if p := field(t, one, "spec", "source", "path"); p != "base/one" {
		t.Fatalf("one: path %q", p)
	}
	if r := field(t, one, "spec", "source", "targetRevision"); r != "{{ unknown }}" {
		t.Fatalf("fasttemplate should leave unknown tags as written, got %q", r)
	}
	if p := field(t, two, "spec", "source", "path"); p != "override/two" {
		t.Fatalf("two: the generator's template override lost: path %q", p)
	}
	if l := two.GetLabels(); l["tier"] != "two" || l["team"] != "red" {
		t.Fatalf("two: labels %v, want the override's tier and the set's team", l)
	}
	if f := one.GetFinalizers(); !slices.Equal(f, []string{"resources-finalizer.argocd.argoproj.io"}) {
		t.Fatalf("finalizers %v", f)
	}

	// templatePatch with sprig, over the rendered Application.
	res = generate(t, loadOne(t, header+`  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - list:
      elements: [{app: Web_App, auto: true, files: [a.yaml, b.yaml]}, {app: db, auto: false, files: []}]
  template:
    metadata: {name: '{{.app | normalize}}'}
    spec:
      source: {repoURL: `+repoURL+`, path: '{{.app | lower | replace "_" "-"}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{slugify .app}}'}
  templatePatch: |
    {{- if .auto }}
    spec:
      syncPolicy:
        automated: {prune: true}
      source:
        helm:
          valueFiles:
          {{- range .files }}
          - {{ . }}
          {{- end }}
    {{- end }}
`), opts)
	web := res.Applications[1]
	if web.GetName() != "web-app" {
		t.Fatalf("names %v", names(res.Applications))
	}
	js, _ := json.Marshal(web.Object["spec"])
	if !strings.Contains(string(js), `"automated":{"prune":true}`) || !strings.Contains(string(js), `"valueFiles":["a.yaml","b.yaml"]`) ||
		!strings.Contains(string(js), `"namespace":"web-app"`) || !strings.Contains(string(js), `"path":"web-app"`) {
		t.Fatalf("patched spec %s", js)
	}
	if _, ok := res.Applications[0].Object["spec"].(map[string]any)["syncPolicy"]; ok {
		t.Fatal("db got the patch meant for auto apps")
	}
}

func TestBadInputTypedErrors(t *testing.T) {
	opts := repoFixture(t)
	opts.Validate = func(app map[string]any) error {
		spec, _ := app["spec"].(map[string]any)
		if _, ok := spec["destination"]; !ok {
			return errors.New("spec.destination: is required")
		}
		return nil
	}
	for _, tc := range []struct {
		name, spec string
		is         error
		gen        int
		kind, want string
	}{
		{"missing key", `  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - list: {elements: [{app: a}]}
  - list: {elements: [{name: b}]}
  template:
    metadata: {name: '{{.app}}'}
    spec: {destination: {server: x}}
`, ErrMissingKey, 1, "list", `map has no entry for key "app"`},
		{"invalid application", `  generators:
  - list: {elements: [{app: a}]}
  template:
    metadata: {name: '{{app}}'}
    spec: {project: default}
`, ErrInvalidApplication, 0, "list", "spec.destination: is required"},
		{"invalid name", `  generators:
  - list: {elements: [{app: Not_A_Name}]}
  template:
    metadata: {name: '{{app}}'}
    spec: {destination: {server: x}}
`, ErrInvalidApplication, 0, "list", "metadata.name"},
		{"duplicate names", `  generators:
  - list: {elements: [{app: a}]}
  - git: {repoURL: ` + repoURL + `, directories: [{path: apps/guestbook}]}
  template:
    metadata: {name: 'same'}
    spec: {destination: {server: x}}
`, ErrDuplicateName, 1, "git", "also from generators[0]"},
		{"template loop", `  goTemplate: true
  generators:
  - list: {elements: [{app: a}]}
  template:
    metadata: {name: '{{define "x"}}{{template "x" .}}{{end}}{{template "x" .}}'}
    spec: {destination: {server: x}}
`, ErrTemplateLoop, 0, "list", "maximum template depth"},
		{"runaway output", `  goTemplate: true
  generators:
  - list: {elements: [{app: a}]}
  template:
    metadata: {name: a}
    spec: {destination: {server: '{{range until 100000}}{{repeat 100 "x"}}{{end}}'}}
`, ErrTemplateLoop, 0, "list", "over 1048576 bytes"},
		{"no provider", `  generators:
  - pullRequest: {github: {owner: o, repo: r}}
  template:
    metadata: {name: a}
`, ErrNoProvider, 0, "pullRequest", `"github" is not registered`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Generate(context.Background(), loadOne(t, header+tc.spec), opts)
			var ge *Error
			if !errors.Is(err, tc.is) || !errors.As(err, &ge) || ge.Set != "s" || ge.Generator != tc.gen || ge.Kind != tc.kind ||
				!strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant %v from generators[%d] (%s) saying %q", err, tc.is, tc.gen, tc.kind, tc.want)
			}
		})
	}
}

// TestTooManyFilesIsBounded: a glob matching more files than MaxFiles
// stops the walk with ErrTooMany instead of reading them all.
func TestTooManyFilesIsBounded(t *testing.T) {
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("many/d%d/config.json", i)] = `{"n": 1}`
	}
	opts := DefaultOptions()
	opts.Repos = DirRepos(map[string]string{repoURL: writeTree(t, files)})
	opts.MaxFiles = 100
	_, err := Generate(context.Background(), loadOne(t, header+`  generators:
  - git: {repoURL: `+repoURL+`, files: [{path: '**/config.json'}]}
  template: {metadata: {name: '{{path.basename}}'}, spec: {destination: {server: x}}}
`), opts)
	var ge *Error
	if !errors.Is(err, ErrTooMany) || !errors.As(err, &ge) || ge.Kind != "git" || !strings.Contains(err.Error(), "more than 100 files") {
		t.Fatalf("err = %v", err)
	}
}

// TestFailedGeneratorKeepsLastGoodOutput: Argo CD's safety rule. A
// generator whose repository breaks keeps its Applications (Stale) while
// the other generators move on; once it recovers, its output is fresh.
func TestFailedGeneratorKeepsLastGoodOutput(t *testing.T) {
	dir := writeTree(t, map[string]string{"apps/a/cm.yaml": "{}", "apps/b/cm.yaml": "{}", "conf/c.json": `{"name": "c"}`})
	opts := DefaultOptions()
	opts.Repos = DirRepos(map[string]string{repoURL: dir})
	r := NewRunner(opts)
	set := loadOne(t, header+`  generators:
  - git: {repoURL: `+repoURL+`, directories: [{path: apps/*}]}
  - list: {elements: [{path.basename: listed}]}
  - git: {repoURL: `+repoURL+`, files: [{path: conf/*.json}], template: {metadata: {name: 'conf{{name}}'}}}
  template: {metadata: {name: '{{path.basename}}'}, spec: {destination: {server: x}}}
`)
	res, err := r.Generate(context.Background(), set)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res.Applications); !slices.Equal(got, []string{"a", "b", "confc", "listed"}) {
		t.Fatalf("first generation %v", got)
	}
	// A config file turns invalid: generators[2] fails and keeps "confc";
	// a new folder still shows up through generators[0].
	if err := os.WriteFile(filepath.Join(dir, "conf/c.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "apps/d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "apps/d/cm.yaml"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = r.Generate(context.Background(), set)
	var ge *Error
	if !errors.As(err, &ge) || ge.Generator != 2 || !strings.Contains(err.Error(), "conf/c.json") {
		t.Fatalf("err = %v", err)
	}
	if got := names(res.Applications); !slices.Equal(got, []string{"a", "b", "confc", "d", "listed"}) {
		t.Fatalf("with a failed generator: %v, want its last good output kept", got)
	}
	if !res.Generators[2].Stale || res.Generators[2].Err == nil || res.Generators[0].Stale {
		t.Fatalf("generator results %+v", res.Generators)
	}
	// Still failing: still kept (stale output stays through failures).
	if res, _ = r.Generate(context.Background(), set); !slices.Contains(names(res.Applications), "confc") {
		t.Fatal("a second failure dropped the last good output")
	}
	if err := os.WriteFile(filepath.Join(dir, "conf/c.json"), []byte(`{"name": "e"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = r.Generate(context.Background(), set)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res.Applications); !slices.Equal(got, []string{"a", "b", "confe", "d", "listed"}) {
		t.Fatalf("after recovery: %v", got)
	}
}

// mapSnapshot is an in-memory snapshot: a glob over 100,000 files costs no
// disk. Directory listings come from an index (fstest.MapFS scans every
// file for each listing).
type mapSnapshot struct {
	fstest.MapFS
	dirs map[string][]fs.DirEntry
}

func newMapSnapshot(m fstest.MapFS) mapSnapshot {
	dirs := map[string][]fs.DirEntry{}
	seen := map[string]bool{}
	for p := range m {
		child := p
		for dir := path.Dir(p); ; dir = path.Dir(dir) {
			if !seen[child] {
				seen[child] = true
				info, _ := fs.Stat(fstest.MapFS{child: m[p]}, child)
				if child != p {
					info = dirInfo(path.Base(child))
				}
				dirs[dir] = append(dirs[dir], fs.FileInfoToDirEntry(info))
			}
			if dir == "." {
				break
			}
			child = dir
		}
	}
	for _, es := range dirs {
		slices.SortFunc(es, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	}
	return mapSnapshot{MapFS: m, dirs: dirs}
}

// ReadDir serves listings from the index.
func (m mapSnapshot) ReadDir(name string) ([]fs.DirEntry, error) {
	es, ok := m.dirs[name]
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	return es, nil
}

// Stat answers directories from the index, files from the map.
func (m mapSnapshot) Stat(name string) (fs.FileInfo, error) {
	if _, ok := m.dirs[name]; ok {
		return dirInfo(path.Base(name)), nil
	}
	if f, ok := m.MapFS[name]; ok {
		return fs.Stat(fstest.MapFS{name: f}, name)
	}
	return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

type dirInfo string

func (d dirInfo) Name() string                { return string(d) }
func (dirInfo) Size() int64                   { return 0 }
func (dirInfo) Mode() fs.FileMode             { return fs.ModeDir | 0o755 }
func (dirInfo) ModTime() time.Time            { return time.Time{} }
func (dirInfo) IsDir() bool                   { return true }
func (dirInfo) Sys() any                      { return nil }
func (mapSnapshot) Revision() source.Revision { return source.Revision{Commit: "c0ffee"} }
func (m mapSnapshot) TreeHash(p string) (string, error) {
	if _, err := m.Stat(p); err != nil {
		return "", err
	}
	return "h:" + p, nil
}

// TestGlobOver100kFilesIsRefused: the case, a files glob matching
// 100,000 files under the default Options, is refused with ErrTooMany
// naming the set and the generator, before the files are read.
func TestGlobOver100kFilesIsRefused(t *testing.T) {
	m := fstest.MapFS{}
	for i := range 100_000 {
		m[fmt.Sprintf("envs/e%03d/app%03d/config.json", i/1000, i%1000)] = &fstest.MapFile{Data: []byte(`{"n": 1}`)}
	}
	opts := DefaultOptions()
	opts.Repos = &fixedRepos{newMapSnapshot(m)}
	_, err := Generate(context.Background(), loadOne(t, header+`  generators:
  - git: {repoURL: `+repoURL+`, files: [{path: 'envs/**/config.json'}]}
  template: {metadata: {name: '{{path.basename}}'}, spec: {destination: {server: x}}}
`), opts)
	var ge *Error
	if !errors.Is(err, ErrTooMany) || !errors.As(err, &ge) || ge.Kind != "git" || ge.Generator != 0 || ge.Set == "" ||
		!strings.Contains(err.Error(), fmt.Sprintf("more than %d files", DefaultOptions().MaxFiles)) {
		t.Fatalf("err = %v", err)
	}
}
