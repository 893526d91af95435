package kustomize

import (
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops/internal/reftools"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/rendertest"
	"github.com/kubegitops/gitops/resource"
)

var update = flag.Bool("update", false, "rewrite golden files")

func fixture(t testing.TB) *rendertest.Snapshot {
	t.Helper()
	files, err := rendertest.LoadDir("testdata/repo", "")
	if err != nil {
		t.Fatal(err)
	}
	return rendertest.NewSnapshot(files)
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

func byName(objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	m := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		m[o.GetKind()+"/"+o.GetName()] = o
	}
	return m
}

func TestRenderOverlayGolden(t *testing.T) {
	objs, err := New(DefaultOptions()).Render(context.Background(), render.Input{FS: fixture(t), Path: "overlays/prod"})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "overlays-prod.yaml", toYAML(t, objs))
	m := byName(objs)
	dep := m["Deployment/prod-web"]
	if dep == nil {
		t.Fatalf("no prod-web Deployment in %v", m)
	}
	if n, _, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas"); n != 3 {
		t.Errorf("replicas = %d, want 3 (patch)", n)
	}
	if dep.GetAnnotations()["prometheus.io/scrape"] != "true" {
		t.Error("component patch not applied")
	}
	if _, ok := m["ServiceMonitor/prod-web"]; !ok {
		t.Error("component resource missing")
	}
}

// TestMatchesKustomizeBuildBinary compares with kustomize v5.8.2 (same
// kustomize/api v0.21.2) building the same overlay on disk. No difference
// is expected: both run krusty with root-only load restrictions, no
// plugins, and the same order (sortOptions, else legacy).
func TestMatchesKustomizeBuildBinary(t *testing.T) {
	bin := reftools.ForTest(t, reftools.Kustomize)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // rendering, not building
	defer cancel()
	for _, dir := range []string{"overlays/prod", "base"} {
		objs, err := New(DefaultOptions()).Render(ctx, render.Input{FS: fixture(t), Path: dir})
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.CommandContext(ctx, bin, "build", filepath.Join("testdata/repo", dir)).Output()
		if err != nil {
			t.Fatalf("kustomize build %s: %v", dir, err)
		}
		want, err := resource.Decode("kustomize build", out, resource.DecodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(want) != len(objs) {
			t.Fatalf("%s: kustomize build printed %d objects, in-process %d", dir, len(want), len(objs))
		}
		for i := range want {
			if !equality.Semantic.DeepEqual(want[i].Object, objs[i].Object) {
				t.Errorf("%s object %d differs:\nkustomize build:\n%s\nin-process:\n%s", dir, i, toYAML(t, want[i:i+1]), toYAML(t, objs[i:i+1]))
			}
		}
	}
}

func TestArgoOverrides(t *testing.T) {
	in := render.Input{FS: fixture(t), Path: "overlays/prod", Kustomize: &render.KustomizeSource{
		NamePrefix:        "team-",
		NameSuffix:        "-v2",
		Images:            []string{"nginx=mirror.example.com/nginx:1.28", "busybox@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
		CommonLabels:      map[string]string{"team": "a"},
		CommonAnnotations: map[string]string{"owner": "team-a"},
		Namespace:         "staging",
		Replicas:          []render.KustomizeReplica{{Name: "web", Count: 5}},
		Patches: []render.KustomizePatch{{
			Target: &render.KustomizeSelector{Kind: "Service"},
			Patch:  `[{"op":"add","path":"/metadata/annotations/patched","value":"yes"}]`,
		}},
	}}
	objs, err := New(DefaultOptions()).Render(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "overlays-prod-overrides.yaml", toYAML(t, objs))
	m := byName(objs)
	dep := m["Deployment/team-web-v2"]
	if dep == nil {
		t.Fatalf("overridden prefix/suffix missing: %v", m)
	}
	if dep.GetNamespace() != "staging" || dep.GetLabels()["team"] != "a" || dep.GetAnnotations()["owner"] != "team-a" {
		t.Errorf("namespace/labels/annotations not overridden: %v %v %v", dep.GetNamespace(), dep.GetLabels(), dep.GetAnnotations())
	}
	if n, _, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas"); n != 5 {
		t.Errorf("replicas = %d, want 5", n)
	}
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	images := []string{}
	for _, c := range containers {
		images = append(images, c.(map[string]any)["image"].(string))
	}
	want := "mirror.example.com/nginx:1.28 busybox@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	if strings.Join(images, " ") != want {
		t.Errorf("images = %v, want %s", images, want)
	}
	if m["Service/team-web-v2"].GetAnnotations()["patched"] != "yes" {
		t.Error("override patch not applied")
	}
}

func TestParseImage(t *testing.T) {
	cases := map[string]types.Image{
		"nginx:1.2":                   {Name: "nginx", NewTag: "1.2"},
		"nginx=reg.io/nginx:1.2":      {Name: "nginx", NewName: "reg.io/nginx", NewTag: "1.2"},
		"reg.io:5000/nginx":           {Name: "reg.io:5000/nginx"},
		"reg.io:5000/nginx:3":         {Name: "reg.io:5000/nginx", NewTag: "3"},
		"nginx@sha256:abc":            {Name: "nginx", Digest: "sha256:abc"},
		"nginx=reg.io/nginx":          {Name: "nginx", NewName: "reg.io/nginx"},
		"nginx=reg.io/nginx@sha256:1": {Name: "nginx", NewName: "reg.io/nginx", Digest: "sha256:1"},
	}
	for spec, want := range cases {
		got, err := parseImage(spec)
		if err != nil || got != want {
			t.Errorf("parseImage(%q) = %+v, %v; want %+v", spec, got, err, want)
		}
	}
}

// TestS9RemoteBasesAreRefusedByDefault: git and http(s) resources fail
// before krusty runs (nothing is cloned or fetched), naming the file and
// the entry.
func TestS9RemoteBasesAreRefusedByDefault(t *testing.T) {
	for _, entry := range []string{
		"https://github.com/kubernetes-sigs/kustomize//examples/helloWorld?ref=v5.0.0",
		"github.com/org/repo/deploy?ref=main",
		"git@github.com:org/repo.git//deploy",
		"https://raw.githubusercontent.com/org/repo/main/cm.yaml",
		"ssh://git@example.com/org/repo.git",
	} {
		snap := fixture(t)
		snap.MapFS["remote/kustomization.yaml"] = &fstest.MapFile{Data: []byte("resources:\n  - ../base\n  - " + entry + "\n")}
		_, err := New(DefaultOptions()).Render(context.Background(), render.Input{FS: snap, Path: "remote"})
		if !errors.Is(err, render.ErrRemoteDisabled) || !strings.Contains(err.Error(), "remote/kustomization.yaml") {
			t.Errorf("%s: %v, want ErrRemoteDisabled naming remote/kustomization.yaml", entry, err)
		}
	}
	// Nested: a local base that itself names a remote base.
	snap := fixture(t)
	snap.MapFS["nested/kustomization.yaml"] = &fstest.MapFile{Data: []byte("resources:\n  - ../inner\n")}
	snap.MapFS["inner/kustomization.yaml"] = &fstest.MapFile{Data: []byte("resources:\n  - github.com/org/repo/x?ref=v1\n")}
	if _, err := New(DefaultOptions()).Render(context.Background(), render.Input{FS: snap, Path: "nested"}); !errors.Is(err, render.ErrRemoteDisabled) {
		t.Errorf("nested remote base: %v, want ErrRemoteDisabled", err)
	}
	// Without Options.Helm, helmCharts are refused (kustomize would exec a helm binary).
	snap.MapFS["helm/kustomization.yaml"] = &fstest.MapFile{Data: []byte("helmCharts:\n  - name: x\n    repo: https://charts.example.com\n")}
	if _, err := New(DefaultOptions()).Render(context.Background(), render.Input{FS: snap, Path: "helm"}); !errors.Is(err, render.ErrRemoteDisabled) {
		t.Errorf("helmCharts: %v, want ErrRemoteDisabled", err)
	}
}

// TestS3SymlinksOutOfTheTreeFail: a resource linked to /etc/passwd, a base
// directory linked out of the tree, and a chain that leaves and re-enters.
func TestS3SymlinksOutOfTheTreeFail(t *testing.T) {
	cases := map[string]fstest.MapFS{
		"absolute": {
			"app/kustomization.yaml": {Data: []byte("resources:\n  - passwd.yaml\n")},
			"app/passwd.yaml":        {Data: []byte("/etc/passwd"), Mode: os.ModeSymlink},
		},
		"base-dir-out": {
			"app/kustomization.yaml": {Data: []byte("resources:\n  - base\n")},
			"app/base":               {Data: []byte("../../.."), Mode: os.ModeSymlink},
		},
		"leave-and-reenter": {
			"app/kustomization.yaml": {Data: []byte("resources:\n  - cm.yaml\n")},
			"app/cm.yaml":            {Data: []byte("../../repo/app/real.yaml"), Mode: os.ModeSymlink},
			"app/real.yaml":          {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")},
		},
	}
	for name, files := range cases {
		_, err := New(DefaultOptions()).Render(context.Background(), render.Input{FS: rendertest.NewSnapshot(files), Path: "app"})
		if !errors.Is(err, render.ErrOutsideRoot) && !errors.Is(err, render.ErrAbsolutePath) {
			t.Errorf("%s: %v, want ErrOutsideRoot or ErrAbsolutePath", name, err)
		}
	}
}

func TestLoadRestrictionsRootOnlyByDefault(t *testing.T) {
	snap := fixture(t)
	snap.MapFS["shared/cm.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n")}
	snap.MapFS["app/kustomization.yaml"] = &fstest.MapFile{Data: []byte("resources:\n  - ../shared/cm.yaml\n")}
	in := render.Input{FS: snap, Path: "app"}
	if _, err := New(DefaultOptions()).Render(context.Background(), in); err == nil || !strings.Contains(err.Error(), "security") {
		t.Fatalf("file outside the kustomization root with root-only: %v, want kustomize's security error", err)
	}
	opts := DefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsNone
	objs, err := New(opts).Render(context.Background(), in)
	if err != nil || len(objs) != 1 {
		t.Fatalf("LoadRestrictionsNone: %d objects, %v", len(objs), err)
	}
}

// TestS18KustomizeOptionsMissTheCache walks every field of Options,
// LoadRestrictions included (argo-cd#29766).
func TestS18KustomizeOptionsMissTheCache(t *testing.T) {
	base := DefaultOptions()
	muts, skipped := rendertest.Mutations(base)
	if len(skipped) != 0 {
		t.Fatalf("fields the walker cannot change: %v", skipped)
	}
	in := render.Input{FS: fixture(t), Path: "overlays/prod"}
	baseKey := rendertest.IdentityKey(t, New(base), in)
	for _, m := range muts {
		if rendertest.IdentityKey(t, New(m.Value.(Options)), in) == baseKey {
			t.Errorf("changing Options.%s does not change the cache key", m.Field)
		}
	}
}

// TestCustomOpenAPISchemaDoesNotLeak: a build selecting its own schema
// runs alone and the default schema is restored for the next builds.
func TestCustomOpenAPISchemaDoesNotLeak(t *testing.T) {
	snap := fixture(t)
	snap.MapFS["custom/kustomization.yaml"] = &fstest.MapFile{Data: []byte("openapi:\n  version: v1.21.2\nresources:\n  - ../base\n")}
	r := New(DefaultOptions())
	if _, err := r.Render(context.Background(), render.Input{FS: snap, Path: "custom"}); err != nil {
		t.Fatal(err)
	}
	objs, err := r.Render(context.Background(), render.Input{FS: snap, Path: "overlays/prod"})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "overlays-prod.yaml", toYAML(t, objs))
}

// TestConcurrentBuildsAreRaceFree runs default-schema builds (read lock)
// alongside a custom-schema build (write lock) under the race detector and
// checks every default build's output.
func TestConcurrentBuildsAreRaceFree(t *testing.T) {
	snap := fixture(t)
	snap.MapFS["custom/kustomization.yaml"] = &fstest.MapFile{Data: []byte("openapi:\n  version: v1.21.2\nresources:\n  - ../base\n")}
	r := New(DefaultOptions())
	want, err := r.Render(context.Background(), render.Input{FS: snap, Path: "overlays/prod"})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		go func() {
			path := "overlays/prod"
			if i == 3 {
				path = "custom"
			}
			got, err := r.Render(context.Background(), render.Input{FS: snap, Path: path})
			if err == nil && path == "overlays/prod" && toYAML(t, got) != toYAML(t, want) {
				err = errors.New("concurrent build differs")
			}
			errs <- err
		}()
	}
	for i := 0; i < 8; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestOverrideComponentsAreAddedAndRooted(t *testing.T) {
	in := render.Input{FS: fixture(t), Path: "base", Kustomize: &render.KustomizeSource{Components: []string{"../components/monitoring"}}}
	objs, err := New(DefaultOptions()).Render(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	m := byName(objs)
	if m["ServiceMonitor/web"] == nil || m["Deployment/web"].GetAnnotations()["prometheus.io/scrape"] != "true" {
		t.Fatalf("component from the override not applied: %v", m)
	}
	in.Kustomize.Components = []string{"../../../../etc"}
	if _, err := New(DefaultOptions()).Render(context.Background(), in); !errors.Is(err, render.ErrOutsideRoot) {
		t.Fatalf("component outside the tree: %v, want ErrOutsideRoot", err)
	}
	in.Kustomize = &render.KustomizeSource{Patches: []render.KustomizePatch{{Path: "/etc/passwd"}}}
	if _, err := New(DefaultOptions()).Render(context.Background(), in); !errors.Is(err, render.ErrAbsolutePath) {
		t.Fatalf("patch file by absolute path: %v, want ErrAbsolutePath", err)
	}
}

func TestOverrideCommonLabelsWinOverTheFile(t *testing.T) {
	snap := fixture(t)
	snap.MapFS["labelled/kustomization.yaml"] = &fstest.MapFile{Data: []byte("commonLabels:\n  team: from-file\nlabels:\n  - pairs:\n      team: from-labels\nresources:\n  - ../base\n")}
	in := render.Input{FS: snap, Path: "labelled", Kustomize: &render.KustomizeSource{CommonLabels: map[string]string{"team": "override"}}}
	// Without forceCommonLabels a key the file sets is refused, as Argo
	// CD's `kustomize edit add label` refuses it.
	if _, err := New(DefaultOptions()).Render(context.Background(), in); !errors.Is(err, render.ErrInvalidInput) || !strings.Contains(err.Error(), "forceCommonLabels") {
		t.Fatalf("an existing label key without force: %v", err)
	}
	in.Kustomize.ForceCommonLabels = true
	objs, err := New(DefaultOptions()).Render(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetLabels()["team"] != "override" {
			t.Errorf("%s/%s team label = %q, want override", o.GetKind(), o.GetName(), o.GetLabels()["team"])
		}
	}
	sel, _, _ := unstructured.NestedStringMap(byName(objs)["Deployment/web"].Object, "spec", "selector", "matchLabels")
	if sel["team"] != "override" {
		t.Errorf("selector team = %q, want override (commonLabels reach selectors)", sel["team"])
	}
}

func TestOverrideLabelWithoutSelectorAndAnnotationsForce(t *testing.T) {
	in := render.Input{FS: fixture(t), Path: "base", Kustomize: &render.KustomizeSource{CommonLabels: map[string]string{"tier": "web"}, LabelWithoutSelector: true}}
	objs, err := New(DefaultOptions()).Render(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	d := byName(objs)["Deployment/web"]
	sel, _, _ := unstructured.NestedStringMap(d.Object, "spec", "selector", "matchLabels")
	if d.GetLabels()["tier"] != "web" || sel["tier"] != "" {
		t.Fatalf("labels %v selector %v: want the label without the selector", d.GetLabels(), sel)
	}
	snap := fixture(t)
	snap.MapFS["annotated/kustomization.yaml"] = &fstest.MapFile{Data: []byte("commonAnnotations:\n  owner: file\nresources:\n  - ../base\n")}
	in = render.Input{FS: snap, Path: "annotated", Kustomize: &render.KustomizeSource{CommonAnnotations: map[string]string{"owner": "override"}}}
	if _, err := New(DefaultOptions()).Render(context.Background(), in); err == nil || !strings.Contains(err.Error(), "forceCommonAnnotations") {
		t.Fatalf("an existing annotation key without force: %v", err)
	}
	in.Kustomize.ForceCommonAnnotations = true
	objs, err = New(DefaultOptions()).Render(context.Background(), in)
	if err != nil || byName(objs)["Deployment/web"].GetAnnotations()["owner"] != "override" {
		t.Fatalf("forced annotation: %v", err)
	}
}

func TestOverrideIgnoreMissingComponentsAndPatchOptions(t *testing.T) {
	in := render.Input{FS: fixture(t), Path: "base", Kustomize: &render.KustomizeSource{Components: []string{"../components/absent"}}}
	if _, err := New(DefaultOptions()).Render(context.Background(), in); err == nil {
		t.Fatal("a missing component was accepted without ignoreMissingComponents")
	}
	in.Kustomize.IgnoreMissingComponents = true
	if _, err := New(DefaultOptions()).Render(context.Background(), in); err != nil {
		t.Fatalf("ignoreMissingComponents: %v", err)
	}
	// Patch options reach the kustomization kustomize builds.
	root := render.NewRoot(fixture(t), render.Limits{})
	out, err := applyOverrides(root, "base", "base/kustomization.yaml", &types.Kustomization{}, render.KustomizeSource{
		Patches: []render.KustomizePatch{{Patch: "{}", Options: map[string]bool{"allowNameChange": true, "allowKindChange": true}}}})
	if err != nil || !strings.Contains(string(out), "allowNameChange: true") || !strings.Contains(string(out), "allowKindChange: true") {
		t.Fatalf("patch options: %v\n%s", err, out)
	}
	if _, err := applyOverrides(root, "base", "base/kustomization.yaml", &types.Kustomization{}, render.KustomizeSource{
		Patches: []render.KustomizePatch{{Patch: "{}", Options: map[string]bool{"allowEverything": true}}}}); !errors.Is(err, render.ErrInvalidInput) {
		t.Fatalf("an unknown patch option: %v", err)
	}
}
