package main

// The suite over Argo CD's documentation examples, as they are (issue 43,
// item 8): every example manifest of docs/operator-manual of the current
// release (internal/argodocs reads it from the release's module zip), the
// declarative cluster Secret of declarative-setup.md and the whole
// manifests of the user guide, each applied by a test of this package
// that checks what the docs say it does. argoDocsSuite says which test
// does it for which file; TestArgoCDDocsSuiteCoversEveryManifest fails
// when the release ships a manifest no test applies.

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/internal/argodocs"
	"github.com/kubegitops/gitops/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// argoDocsSuite maps each manifest Argo CD's docs ship (a path of the
// release, "#name" for a YAML block of a page) to the tests that apply it
// as it is and check what the docs say: "TestX" in this package, or
// "dir:TestX" in the package at dir (relative to this one) for a file
// the operator does not read. A file that is no manifest says why in
// notAManifest instead.
var argoDocsSuite = map[string][]string{
	// Its destinations, cluster whitelist by name, namespace whitelist,
	// roles (tokens named), windows: apps Synced and Healthy, violations
	// refused with Argo CD's messages; GnuPG source integrity.
	"docs/operator-manual/project.yaml": {"TestArgoCDDocumentedProjectWorksWhole"},
	// Every repository and template loads and its apps sync.
	"docs/operator-manual/argocd-repositories.yaml": {"TestArgoCDRepositoryDocsLoadWholeAndSync"},
	"docs/operator-manual/argocd-repo-creds.yaml":   {"TestArgoCDRepositoryDocsLoadWholeAndSync"},
	// Every key applied or named in an Event, apps syncing.
	"docs/operator-manual/argocd-cm.yaml":            {"TestSettingsArgoCDDocsFiles"},
	"docs/operator-manual/argocd-cmd-params-cm.yaml": {"TestSettingsArgoCDDocsFiles"},
	// The reference Application and ApplicationSet, argocd-secret's
	// webhook keys, the TLS certificates and SSH known hosts, the
	// notifications ConfigMap and Secret, and the declarative cluster
	// Secret. The SSH known hosts also live, against a real SSH Git
	// server: an app refused as an unknown host, synced once the user
	// adds the server's line (TestArgoCDDocsSSHKnownHostsLive).
	"docs/operator-manual/application.yaml":                               {"TestArgoCDDocsManifestsOnCluster"},
	"docs/operator-manual/applicationset.yaml":                            {"TestArgoCDDocsManifestsOnCluster"},
	"docs/operator-manual/argocd-secret.yaml":                             {"TestArgoCDDocsManifestsOnCluster"},
	"docs/operator-manual/argocd-ssh-known-hosts-cm.yaml":                 {"TestArgoCDDocsManifestsOnCluster", "TestArgoCDDocsSSHKnownHostsLive"},
	"docs/operator-manual/argocd-tls-certs-cm.yaml":                       {"TestArgoCDDocsManifestsOnCluster"},
	"docs/operator-manual/notifications/argocd-notifications-cm.yaml":     {"TestArgoCDDocsManifestsOnCluster"},
	"docs/operator-manual/notifications/argocd-notifications-secret.yaml": {"TestArgoCDDocsManifestsOnCluster"},
	"docs/operator-manual/declarative-setup.md#mycluster-secret":          {"TestArgoCDDocsManifestsOnCluster"},
	// Argo CD's API server reads it, not the operator: the portal
	// enforces it.
	"docs/operator-manual/argocd-rbac-cm.yaml": {"../portal:TestArgoCDDocsRBACConfigMap"},
	// The user guide's whole Application, AppProject and ApplicationSet
	// manifests.
	"docs/user-guide/*.md": {"TestArgoCDUserGuideManifestsStoredWhole", "TestArgoCDUserGuideManifestsRun"},
}

// notAManifest are the files of docs/operator-manual with a manifest's
// extension that are no Kubernetes object, and what they are.
var notAManifest = map[string]string{
	"docs/operator-manual/notifications/grafana-dashboard.json": "a Grafana dashboard of the notifications metrics",
}

// TestArgoCDDocsSuiteCoversEveryManifest: every manifest of the release's
// docs/operator-manual (and each page block the suite names) has an
// entry in argoDocsSuite, and each entry's tests exist and read it.
func TestArgoCDDocsSuiteCoversEveryManifest(t *testing.T) {
	rel := argodocs.ForTest(t)
	var files []string
	for _, pattern := range []string{"docs/operator-manual/*.yaml", "docs/operator-manual/*/*.yaml", "docs/operator-manual/*.json", "docs/operator-manual/*/*.json", "docs/operator-manual/*.yml", "docs/operator-manual/*/*.yml"} {
		names, err := rel.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, names...)
	}
	if len(files) < 10 {
		t.Fatalf("only %d manifests in docs/operator-manual: %v", len(files), files)
	}
	for _, f := range files {
		if _, ok := notAManifest[f]; ok {
			continue
		}
		if _, ok := argoDocsSuite[f]; !ok {
			t.Errorf("%s of Argo CD %s is applied by no test of the suite (argoDocsSuite)", f, rel.Version())
		}
	}
	for f := range notAManifest {
		if _, err := rel.ReadFile(f); err != nil {
			t.Errorf("notAManifest: %v", err)
		}
	}
	funcs := map[string]map[string]string{} // dir -> test name -> its file's source
	for entry, tests := range argoDocsSuite {
		file, block, _ := strings.Cut(entry, "#")
		if matches, _ := rel.Glob(file); len(matches) == 0 {
			t.Errorf("argoDocsSuite names %s, which Argo CD %s does not ship", file, rel.Version())
		} else if block != "" {
			if _, ok := docsBlock(rel.MustReadFile(t, file), block); !ok {
				t.Errorf("%s has no YAML block of an object named %s", file, block)
			}
		}
		for _, test := range tests {
			dir, name, ok := strings.Cut(test, ":")
			if !ok {
				dir, name = ".", test
			}
			if funcs[dir] == nil {
				funcs[dir] = testFuncs(t, dir)
			}
			src, ok := funcs[dir][name]
			if !ok {
				t.Errorf("%s: no test %s in %s", entry, name, dir)
				continue
			}
			want := path.Base(file)
			if strings.Contains(want, "*") {
				want = path.Dir(file)
			}
			if !strings.Contains(src, want) {
				t.Errorf("%s: %s (in %s) does not read %s", entry, name, dir, want)
			}
		}
	}
}

// testFuncs are the Test functions of the _test.go files of dir, each
// with the source of its file.
func testFuncs(t *testing.T, dir string) map[string]string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no tests in %s: %v", dir, err)
	}
	out := map[string]string{}
	for _, name := range names {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Test") {
				out[fd.Name.Name] = string(src)
			}
		}
	}
	return out
}

// markdownYAMLBlocks returns the fenced YAML blocks (```yaml or ```yml)
// of a Markdown page, indentation removed (blocks inside admonitions are
// indented), in order.
func markdownYAMLBlocks(md []byte) []string {
	var blocks []string
	var cur []string
	indent, in := "", false
	for _, line := range strings.Split(string(md), "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if !in {
			fence := strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
			if strings.HasPrefix(trimmed, "```") && (fence == "yaml" || fence == "yml" || strings.HasPrefix(fence, "yaml ")) {
				in, indent, cur = true, line[:len(line)-len(trimmed)], nil
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") {
			blocks = append(blocks, strings.Join(cur, "\n")+"\n")
			in = false
			continue
		}
		cur = append(cur, strings.TrimPrefix(line, indent))
	}
	return blocks
}

// docsBlock returns the first YAML block of a page that holds an object
// named name, as it is written.
func docsBlock(md []byte, name string) (string, bool) {
	for _, b := range markdownYAMLBlocks(md) {
		objs, err := resource.Decode("block.yaml", []byte(b), resource.DecodeOptions{})
		if err != nil {
			continue
		}
		for _, o := range objs {
			if o.GetName() == name {
				return b, true
			}
		}
	}
	return "", false
}

// rewriteDocURLs replaces each URL (or host) of Argo CD's docs by the
// local server that stands for it, failing when the doc no longer holds
// one (the test would check nothing). It is the only change made to a
// documented file besides the workarounds a test names.
func rewriteDocURLs(t *testing.T, file, doc string, urls map[string]string) string {
	t.Helper()
	keys := make([]string, 0, len(urls))
	for k := range urls {
		keys = append(keys, k)
	}
	// The longest first, so that a URL is replaced before its prefix.
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	for _, old := range keys {
		if !strings.Contains(doc, old) {
			t.Fatalf("%s no longer names %s", file, old)
		}
		doc = strings.ReplaceAll(doc, old, urls[old])
	}
	return doc
}

// lostFields returns the paths of the leaves of doc (an object as
// written) that stored (the object the API server returned) lacks or
// holds with another value: what a CRD schema pruned or a type dropped.
// A null or empty leaf the server left out is not lost.
func lostFields(doc, stored map[string]any) []string {
	var lost []string
	var walk func(p string, d, s any)
	walk = func(p string, d, s any) {
		switch dv := d.(type) {
		case map[string]any:
			sm, _ := s.(map[string]any)
			if len(dv) == 0 {
				return
			}
			for k, v := range dv {
				var sv any
				if sm != nil {
					sv = sm[k]
				}
				walk(p+"."+k, v, sv)
			}
		case []any:
			ss, _ := s.([]any)
			if len(dv) == 0 {
				return
			}
			if len(ss) != len(dv) {
				lost = append(lost, fmt.Sprintf("%s (%d items stored of %d)", p, len(ss), len(dv)))
				return
			}
			for i := range dv {
				walk(fmt.Sprintf("%s[%d]", p, i), dv[i], ss[i])
			}
		case nil:
		default:
			if !sameJSON(d, s) {
				lost = append(lost, fmt.Sprintf("%s (%v stored as %v)", p, d, s))
			}
		}
	}
	walk("", doc, stored)
	sort.Strings(lost)
	return lost
}

// sameJSON compares two decoded leaves as JSON (an int64 and a float64 of
// the same number are the same).
func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return reflect.DeepEqual(a, b)
	}
	var va, vb any
	_ = json.Unmarshal(ja, &va)
	_ = json.Unmarshal(jb, &vb)
	return reflect.DeepEqual(va, vb)
}

// userGuideManifests are the whole Argo CD objects (wholeManifest) of
// the YAML blocks
// of the user guide's pages, keyed "page#n" (n counting the page's
// objects).
func userGuideManifests(t *testing.T, rel *argodocs.Release) map[string]*unstructured.Unstructured {
	t.Helper()
	var pages []string
	for _, pattern := range []string{"docs/user-guide/*.md", "docs/user-guide/*/*.md"} {
		names, err := rel.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, names...)
	}
	out := map[string]*unstructured.Unstructured{}
	for _, page := range pages {
		n := 0
		for _, b := range markdownYAMLBlocks(rel.MustReadFile(t, page)) {
			objs, err := resource.Decode(page, []byte(b), resource.DecodeOptions{})
			if err != nil {
				continue // a fragment, not a manifest
			}
			for _, o := range objs {
				gvk := o.GroupVersionKind()
				if gvk.Group != "argoproj.io" || o.GetName() == "" || strings.Contains(o.GetName(), "{{") {
					continue
				}
				if wholeManifest(o) {
					n++
					out[fmt.Sprintf("%s#%d", page, n)] = o
				}
			}
		}
	}
	return out
}

// wholeManifest reports whether o is an Argo CD object a user can apply
// as it is, not a fragment a page shows to explain one field: an
// Application with a destination and a source (source, sources or
// sourceHydrator), an ApplicationSet with generators and a template, an
// AppProject with a spec.
func wholeManifest(o *unstructured.Unstructured) bool {
	has := func(fields ...string) bool {
		_, ok, _ := unstructured.NestedFieldNoCopy(o.Object, fields...)
		return ok
	}
	switch o.GetKind() {
	case "Application":
		return has("spec", "destination") && (has("spec", "source") || has("spec", "sources") || has("spec", "sourceHydrator"))
	case "ApplicationSet":
		return has("spec", "generators") && has("spec", "template")
	case "AppProject":
		return has("spec")
	}
	return false
}
