package kustomize

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/kubegitops/gitops/internal/chartserver"
	"github.com/kubegitops/gitops/internal/reftools"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/helm"
	"github.com/kubegitops/gitops/resource"
)

// probeChart uses everything helmCharts passes to Helm: values, the
// release name and namespace, CRDs, API versions and the kube version.
func probeChart(t testing.TB, name string) string {
	return chartserver.Chart(t, name, "1.2.0", map[string]string{
		"values.yaml": "greeting: hello\nnested: {a: chart, b: chart}\nlist: [1, 2]\n",
		"crds/crontab.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: crontabs.example.com}
spec:
  group: example.com
  names: {kind: CronTab, plural: crontabs}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`,
		"templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-probe
data:
  greeting: {{ .Values.greeting | quote }}
  nested: {{ toJson .Values.nested | quote }}
  list: {{ toJson .Values.list | quote }}
  extra: {{ .Values.extra | default "none" | quote }}
  releaseNamespace: {{ .Release.Namespace | quote }}
  kube: {{ .Capabilities.KubeVersion.Version | quote }}
  hasMonitoring: {{ .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" | quote }}
`,
		"templates/svc.yaml": `apiVersion: v1
kind: Service
metadata: {name: {{ .Release.Name }}-svc}
spec: {ports: [{port: 80}]}
`,
	})
}

// TestHelmChartsMatchKustomizeEnableHelm builds kustomizations with
// helmCharts (a chart pulled from an HTTP repository and a local one under
// chartHome) with the reference kustomize 5.8.2 and helm 3.22.0, and in
// process; the objects must be equal.
func TestHelmChartsMatchKustomizeEnableHelm(t *testing.T) {
	kbin, hbin := reftools.ForTest(t, reftools.Kustomize), reftools.ForTest(t, reftools.Helm)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // rendering, not building
	defer cancel()
	repo := chartserver.New(t, chartserver.Options{})
	repo.Add(probeChart(t, "probe"))
	files := map[string]string{
		"remote/kustomization.yaml": `namespace: apps
resources: [cm.yaml]
helmCharts:
- name: probe
  repo: ` + repo.URL + `
  version: 1.2.0
  releaseName: first
  namespace: team
  includeCRDs: true
  kubeVersion: "1.31.0"
  apiVersions: [monitoring.coreos.com/v1]
  valuesInline: {greeting: inline, nested: {b: inline}}
  additionalValuesFiles: [more.yaml]
- name: probe
  repo: ` + repo.URL + `
  version: 1.2.0
  releaseName: second
  valuesFile: own.yaml
  valuesInline: {nested: {a: inline}}
  valuesMerge: merge
`,
		"remote/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\ndata: {a: b}\n",
		"remote/more.yaml": "extra: from-more\nlist: [3]\n",
		"remote/own.yaml":  "greeting: own\nnested: {a: own}\n",
		"local/kustomization.yaml": `helmGlobals: {chartHome: vendored}
helmCharts:
- name: probe
  releaseName: local
  valuesInline: {greeting: replaced}
  valuesMerge: replace
`,
	}
	dir := testfiles.Tree(t, files)
	local := probeChart(t, "probe")
	copyTree(t, local, filepath.Join(dir, "local/vendored/probe"))
	// The reference pulls charts into the tree: it builds a copy.
	refDir := testfiles.Tree(t, files)
	copyTree(t, local, filepath.Join(refDir, "local/vendored/probe"))

	hopts := helm.DefaultOptions()
	hopts.FetchDependencies = true
	r := New(Options{Helm: helm.New(hopts)})
	for _, app := range []string{"remote", "local"} {
		objs, err := r.Render(ctx, render.Input{FS: os.DirFS(dir), Path: app})
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(ctx, kbin, "build", "--enable-helm", "--helm-command", hbin, filepath.Join(refDir, app))
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kustomize build --enable-helm %s: %v\n%s", app, err, out)
		}
		want, err := resource.Decode("kustomize build", out, resource.DecodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(want) != len(objs) || len(want) < 2 {
			t.Fatalf("%s: kustomize build printed %d objects, in-process %d:\n%s\n---- in process:\n%s", app, len(want), len(objs), out, toYAML(t, objs))
		}
		for i := range want {
			if !equality.Semantic.DeepEqual(want[i].Object, objs[i].Object) {
				t.Errorf("%s object %d differs:\nkustomize build:\n%s\nin-process:\n%s", app, i, toYAML(t, want[i:i+1]), toYAML(t, objs[i:i+1]))
			}
		}
	}
}

func TestHelmChartsRefusals(t *testing.T) {
	repo := chartserver.New(t, chartserver.Options{})
	repo.Add(probeChart(t, "probe"))
	dir := testfiles.Tree(t, map[string]string{
		"app/kustomization.yaml":    "helmCharts:\n- {name: probe, repo: " + repo.URL + ", version: 1.2.0, releaseName: x}\n",
		"tmpl/kustomization.yaml":   "helmCharts:\n- {name: probe, repo: " + repo.URL + ", version: 1.2.0, nameTemplate: x}\n",
		"escape/kustomization.yaml": "helmCharts:\n- {name: probe, repo: " + repo.URL + ", version: 1.2.0, valuesFile: ../secret.yaml}\n",
		"secret.yaml":               "a: b\n",
	})
	hopts := helm.DefaultOptions()
	hopts.FetchDependencies = true
	withHelm := New(Options{Helm: helm.New(hopts)})
	ctx := context.Background()
	in := func(p string, allowed ...string) render.Input {
		return render.Input{FS: os.DirFS(dir), Path: p, Helm: &render.HelmSource{DependencyRepos: allowed}}
	}
	cases := []struct {
		what string
		r    *Renderer
		in   render.Input
		want error
	}{
		{"no in-process helm", New(DefaultOptions()), in("app"), render.ErrRemoteDisabled},
		{"repository not admitted", withHelm, in("app", "https://charts.example.com/*"), render.ErrRemoteDisabled},
		{"nameTemplate", withHelm, in("tmpl"), render.ErrInvalidInput},
		{"valuesFile outside the kustomization", withHelm, in("escape"), render.ErrOutsideRoot},
	}
	for _, c := range cases {
		_, err := c.r.Render(ctx, c.in)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), "kustomization.yaml") {
			t.Fatalf("%s: %v", c.what, err)
		}
	}
	if repo.ArchiveRequests() != 0 {
		t.Fatalf("a refused chart was downloaded (%d archive requests)", repo.ArchiveRequests())
	}
	// Admitted, it renders.
	objs, err := withHelm.Render(ctx, in("app", repo.URL))
	if err != nil || len(objs) != 2 {
		t.Fatalf("admitted: %d objects, %v", len(objs), err)
	}
}

func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
