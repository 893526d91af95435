package helm

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/rendertest"
	"github.com/kubegitops/gitops/resource"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixture loads testdata/app under repo/charts/app, next to a secret that
// lives outside the chart (but inside the tree) and one outside the tree.
func fixture(t testing.TB) *rendertest.Snapshot {
	t.Helper()
	files, err := rendertest.LoadDir("testdata/app", "charts/app")
	if err != nil {
		t.Fatal(err)
	}
	files["other-team/secret-values.yaml"] = &fstest.MapFile{Data: []byte("password: hunter2\n")}
	return rendertest.NewSnapshot(files)
}

func prodInput(fsys *rendertest.Snapshot) render.Input {
	return render.Input{
		FS: fsys, Path: "charts/app", AppName: "demo", Namespace: "prod",
		KubeVersion: "1.37.2", APIVersions: []string{"example.com/v1"},
		Helm: &render.HelmSource{
			ValueFiles:     []string{"values-prod.yaml"},
			Values:         "image:\n  tag: \"1.28\"\n",
			ValuesObject:   map[string]any{"global": map[string]any{"env": "prod"}},
			Parameters:     []render.HelmParameter{{Name: "service.port", Value: "8080"}, {Name: "config.extra", Value: "42", ForceString: true}},
			FileParameters: []render.HelmFileParameter{{Name: "fromFile", Path: "setfile.txt"}},
		},
	}
}

func toYAML(t testing.TB, objs []*unstructured.Unstructured) string {
	t.Helper()
	var b strings.Builder
	for _, o := range objs {
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	return b.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", "golden", name)
	if *update {
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Fatalf("output differs from %s (run with -update after checking):\n%s", p, got)
	}
}

func TestRenderGolden(t *testing.T) {
	objs, err := New(DefaultOptions()).Render(context.Background(), prodInput(fixture(t)))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "app-prod.yaml", toYAML(t, objs))
	kinds := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		kinds[o.GetKind()+"/"+o.GetName()] = o
	}
	if _, ok := kinds["CustomResourceDefinition/widgets.example.com"]; !ok {
		t.Error("CRD from crds/ missing")
	}
	job := kinds["Job/demo-app-migrate"]
	if job == nil || job.GetAnnotations()[resource.AnnotationHelmHook] != "pre-install,pre-upgrade" || job.GetAnnotations()["helm.sh/hook-weight"] != "-5" {
		t.Errorf("hook Job missing or without its helm.sh/hook annotations: %v", job)
	}
	if _, ok := kinds["Pod/demo-app-test"]; !ok {
		t.Error("test hook missing (SkipTests is false)")
	}
	cm := kinds["ConfigMap/demo-app-config"]
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	want := map[string]string{"greeting": "hello-prod", "extra": "42", "kubeVersion": "v1.37.2", "hasWidgets": "true", "isInstall": "true", "fromFile": "file-content\n", "lookupEmpty": "true"}
	for k, v := range want {
		if data[k] != v {
			t.Errorf("configmap data[%s] = %q, want %q", k, data[k], v)
		}
	}
	sub := kinds["ConfigMap/demo-sub"]
	if msg, _, _ := unstructured.NestedString(sub.Object, "data", "message"); msg != "from-parent" {
		t.Errorf("sub-chart value = %q, want from-parent", msg)
	}
	if objs[len(objs)-1].GetAnnotations()[resource.AnnotationHelmHook] == "" {
		t.Error("hooks must come last, as helm template prints them")
	}
}

func TestSkipCRDsAndTests(t *testing.T) {
	in := prodInput(fixture(t))
	in.Helm.SkipCRDs, in.Helm.SkipTests = true, true
	objs, err := New(DefaultOptions()).Render(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" || o.GetAnnotations()[resource.AnnotationHelmHook] == "test" {
			t.Errorf("%s/%s rendered despite SkipCRDs/SkipTests", o.GetKind(), o.GetName())
		}
	}
}

// TestMatchesHelmTemplateBinary renders the fixture in-process and with the
// helm v3.22.0 binary built from the same module, and requires the same
// objects in the same order. No difference is expected or allowed: the
// binary runs action.Install with DryRun/ClientOnly/Replace, the renderer
// the same steps through Helm's engine, chartutil and releaseutil, with
// --include-crds and the same capabilities; both print the manifest, then
// the hooks.
func TestMatchesHelmTemplateBinary(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	objs, err := New(DefaultOptions()).Render(ctx, prodInput(fixture(t)))
	if err != nil {
		t.Fatal(err)
	}
	valuesFile := filepath.Join(t.TempDir(), "inline.yaml")
	_ = os.WriteFile(valuesFile, []byte("image:\n  tag: \"1.28\"\nglobal:\n  env: prod\n"), 0o644)
	want, err := helmTemplate(ctx, t, "demo", "testdata/app", "--namespace", "prod",
		"--include-crds", "--kube-version", "1.37.2", "--api-versions", "example.com/v1",
		"-f", "testdata/app/values-prod.yaml", "-f", valuesFile,
		"--set", "service.port=8080", "--set-string", "config.extra=42", "--set-file", "fromFile=testdata/app/setfile.txt")
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	requireSameObjects(t, want, objs)
}

// TestS1ValuesFileTraversalIsRefused covers CVE-2022-24348 and friends:
// value files and --set-file paths that leave the tree, absolute paths, and
// URL schemes (file://, https:// not allow-listed, helm-secrets style)
// fail before any read, with typed errors that never echo file contents.
func TestS1ValuesFileTraversalIsRefused(t *testing.T) {
	snap := fixture(t)
	cases := map[string]error{
		"../../../../etc/passwd":             render.ErrOutsideRoot,
		"../../../other-team/../../x.yaml":   render.ErrOutsideRoot,
		"/etc/passwd":                        render.ErrAbsolutePath,
		"file:///etc/passwd":                 render.ErrSchemeNotAllowed,
		"https://evil.example/values.yaml":   render.ErrSchemeNotAllowed,
		"secrets://../../../etc/passwd":      render.ErrSchemeNotAllowed,
		"$values/../../../../etc/passwd":     render.ErrOutsideRoot,
		"values.yaml?../../../../etc/passwd": nil, // a literal (missing) file name
	}
	r := New(DefaultOptions())
	for vf, want := range cases {
		in := prodInput(snap)
		in.Helm = &render.HelmSource{ValueFiles: []string{vf}}
		_, err := r.Render(context.Background(), in)
		if want == nil {
			if !errors.Is(err, os.ErrNotExist) {
				t.Errorf("value file %q: %v, want not found", vf, err)
			}
			continue
		}
		if !errors.Is(err, want) {
			t.Errorf("value file %q: %v, want %v", vf, err, want)
		}
		var re *render.Error
		if !errors.As(err, &re) || re.Tool != render.KindHelm || re.AppName != "demo" {
			t.Errorf("value file %q: error %v does not name the tool and app", vf, err)
		}
	}
	// A file parameter is rooted the same way; a file elsewhere in the tree
	// (another team's) is readable only through a path that stays inside.
	for _, p := range []string{"../../../etc/passwd", "/etc/passwd", "file:///etc/passwd"} {
		in := prodInput(snap)
		in.Helm = &render.HelmSource{FileParameters: []render.HelmFileParameter{{Name: "x", Path: p}}}
		if _, err := r.Render(context.Background(), in); err == nil {
			t.Errorf("--set-file %q was read", p)
		}
	}
}

func TestS1AllowListedSchemeIsTheOnlyWayOut(t *testing.T) {
	in := prodInput(fixture(t))
	in.Helm = &render.HelmSource{ValueFiles: []string{"file:///etc/passwd"}}
	r := New(Options{AllowedValueSchemes: []string{"file"}})
	if _, err := r.Render(context.Background(), in); !errors.Is(err, render.ErrSchemeNotAllowed) {
		t.Fatalf("file:// even when listed: %v, want ErrSchemeNotAllowed (only http and https are ever fetched)", err)
	}
}

// TestS3SymlinkedValuesFile: a values.yaml that is a link out of the tree
// is refused; a link to a file inside the tree works (argo-cd#8379).
func TestS3SymlinkedValuesFile(t *testing.T) {
	snap := fixture(t)
	snap.MapFS["charts/app/evil.yaml"] = &fstest.MapFile{Data: []byte("../../../etc/passwd"), Mode: os.ModeSymlink}
	snap.MapFS["charts/app/shared.yaml"] = &fstest.MapFile{Data: []byte("../../other-team/secret-values.yaml"), Mode: os.ModeSymlink}
	r := New(DefaultOptions())
	in := prodInput(snap)
	in.Helm = &render.HelmSource{ValueFiles: []string{"evil.yaml"}}
	_, err := r.Render(context.Background(), in)
	if !errors.Is(err, render.ErrOutsideRoot) {
		t.Fatalf("symlinked values out of the tree: %v, want ErrOutsideRoot", err)
	}
	delete(snap.MapFS, "charts/app/evil.yaml")
	in.Helm = &render.HelmSource{ValueFiles: []string{"shared.yaml"}}
	if _, err := r.Render(context.Background(), in); err != nil {
		t.Fatalf("symlinked values inside the tree: %v", err)
	}
	// A link inside the chart itself that leaves the tree fails the load.
	snap.MapFS["charts/app/templates/leak.yaml"] = &fstest.MapFile{Data: []byte("/etc/passwd"), Mode: os.ModeSymlink}
	in.Helm = nil
	if _, err := r.Render(context.Background(), in); !errors.Is(err, render.ErrAbsolutePath) {
		t.Fatalf("chart template linking to /etc/passwd: %v, want ErrAbsolutePath", err)
	}
}

// TestS6ValuesAliasBomb: a billion-laughs values file is refused quickly.
func TestS6ValuesAliasBomb(t *testing.T) {
	bomb := `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
`
	snap := fixture(t)
	snap.MapFS["charts/app/bomb.yaml"] = &fstest.MapFile{Data: []byte(bomb)}
	in := prodInput(snap)
	in.Helm = &render.HelmSource{ValueFiles: []string{"bomb.yaml"}}
	_, err := New(DefaultOptions()).Render(context.Background(), in)
	var pe *render.PathError
	if !errors.As(err, &pe) || pe.Path != "bomb.yaml" {
		t.Fatalf("alias bomb values: %v, want a PathError naming bomb.yaml", err)
	}
}

// TestS9NoNetworkDuringRender: lookup returns empty (no cluster client),
// and a dependency missing from charts/ fails with ErrRemoteDisabled unless
// FetchDependencies is set (see TestFetchDependenciesWhenAllowed).
func TestS9NoNetworkDuringRender(t *testing.T) {
	snap := fixture(t)
	objs, err := New(DefaultOptions()).Render(context.Background(), prodInput(snap))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetName() == "demo-app-config" {
			if v, _, _ := unstructured.NestedString(o.Object, "data", "lookupEmpty"); v != "true" {
				t.Fatalf("lookup returned something: %q", v)
			}
		}
	}
	if _, err := New(DefaultOptions()).Render(context.Background(), prodInput(withoutVendoredDeps(snap))); !errors.Is(err, render.ErrRemoteDisabled) || !strings.Contains(err.Error(), "sub") {
		t.Fatalf("missing dependency: %v, want ErrRemoteDisabled naming it", err)
	}
}

func withoutVendoredDeps(snap *rendertest.Snapshot) *rendertest.Snapshot {
	missing := snap.With(nil)
	for k := range missing.MapFS {
		if strings.HasPrefix(k, "charts/app/charts/") {
			delete(missing.MapFS, k)
		}
	}
	return missing
}

// TestS18HelmOptionsMissTheCache walks every field of Options.
func TestS18HelmOptionsMissTheCache(t *testing.T) {
	base := DefaultOptions()
	muts, skipped := rendertest.Mutations(base)
	if len(skipped) != 1 || skipped[0] != "Dependencies" {
		t.Fatalf("fields the walker cannot change: %v (only the Dependencies interface is expected)", skipped)
	}
	in := prodInput(fixture(t))
	key := func(o Options) string { return rendertest.IdentityKey(t, New(o), in) }
	baseKey := key(base)
	withFetcher := base
	withFetcher.Dependencies = fetcherFunc(func(context.Context, DependencyRequest) ([]byte, error) { return nil, nil })
	if key(withFetcher) == baseKey {
		t.Error("setting Options.Dependencies does not change the cache key")
	}
	for _, m := range muts {
		if key(m.Value.(Options)) == baseKey {
			t.Errorf("changing Options.%s does not change the cache key", m.Field)
		}
	}
}

type fetcherFunc func(context.Context, DependencyRequest) ([]byte, error)

func (f fetcherFunc) FetchDependency(ctx context.Context, req DependencyRequest) ([]byte, error) {
	return f(ctx, req)
}
