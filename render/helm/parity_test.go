package helm

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/internal/reftools"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/rendertest"
	"github.com/kubegitops/gitops/resource"
)

// helmTemplate runs the reference helm v3.22.0 binary's `helm template`
// with args, in empty Helm homes, and returns its objects or its error
// output.
func helmTemplate(ctx context.Context, t *testing.T, args ...string) ([]*unstructured.Unstructured, error) {
	t.Helper()
	helmBin := reftools.ForTest(t, reftools.Helm)
	cmd := exec.CommandContext(ctx, helmBin, append([]string{"template"}, args...)...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return nil, errors.New(string(exit.Stderr))
		}
		t.Fatalf("helm template: %v", err)
	}
	objs, err := resource.Decode("helm template", out, resource.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return objs, nil
}

// requireSameObjects fails unless got holds want's objects in want's order.
func requireSameObjects(t *testing.T, want, got []*unstructured.Unstructured) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("helm template printed %d objects, in-process %d:\nhelm template:\n%s\nin-process:\n%s", len(want), len(got), toYAML(t, want), toYAML(t, got))
	}
	for i := range want {
		if !equality.Semantic.DeepEqual(want[i].Object, got[i].Object) {
			t.Errorf("object %d differs:\nhelm template:\n%s\nin-process:\n%s", i, toYAML(t, want[i:i+1]), toYAML(t, got[i:i+1]))
		}
	}
}

// parityInput renders testdata/<chart> from a snapshot, as the app "parity".
func parityInput(t *testing.T, chart string) render.Input {
	t.Helper()
	files, err := rendertest.LoadDir("testdata/"+chart, "chart")
	if err != nil {
		t.Fatal(err)
	}
	return render.Input{FS: rendertest.NewSnapshot(files), Path: "chart", AppName: "parity", Namespace: "team", Helm: &render.HelmSource{}}
}

// TestParityChartMatchesHelmTemplateBinary renders testdata/parity, which
// uses what the app fixture does not (dependency conditions, tags, aliases
// and import-values, a values schema, every .Release field, the default
// capabilities, .Files, .Template, .Subcharts, tpl, a chart kubeVersion,
// kinds in every InstallOrder position, weighted hooks, NOTES.txt in a
// sub-chart), in-process and with the helm binary, for several option
// sets, and requires the same objects in the same order.
func TestParityChartMatchesHelmTemplateBinary(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cases := []struct {
		name string
		edit func(*render.Input)
		args []string
	}{
		{"install", func(in *render.Input) {
			in.KubeVersion, in.APIVersions = "1.31.4", []string{"example.com/v1"}
			in.Helm.Parameters = []render.HelmParameter{{Name: "replicas", Value: "3"}}
		}, []string{"--kube-version", "1.31.4", "--api-versions", "example.com/v1", "--set", "replicas=3", "--include-crds"}},
		{"upgrade without tests or CRDs, tag and condition flipped", func(in *render.Input) {
			in.Helm.IsUpgrade, in.Helm.SkipTests, in.Helm.SkipCRDs = true, true, true
			in.Helm.Values = "tags:\n  frontend: true\nchild:\n  enabled: false\n"
		}, []string{"--is-upgrade", "--skip-tests", "--set", "tags.frontend=true", "--set", "child.enabled=false"}},
		{"schema skipped", func(in *render.Input) {
			in.Helm.SkipSchemaValidation = true
			in.Helm.Parameters = []render.HelmParameter{{Name: "replicas", Value: "0"}}
		}, []string{"--skip-schema-validation", "--set", "replicas=0", "--include-crds"}},
		{"default release name and namespace", func(in *render.Input) {
			in.AppName, in.Namespace = "", ""
		}, []string{"--namespace", "default", "--include-crds"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := parityInput(t, "parity")
			name, ns := "parity", "team"
			c.edit(&in)
			if in.AppName == "" {
				name = "release-name"
			}
			args := []string{name, "testdata/parity"}
			if in.Namespace != "" {
				args = append(args, "--namespace", ns)
			}
			want, err := helmTemplate(ctx, t, append(args, c.args...)...)
			if err != nil {
				t.Fatalf("helm template: %v", err)
			}
			got, err := New(DefaultOptions()).Render(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			requireSameObjects(t, want, got)
		})
	}
}

// TestParityChartRefusedAsHelmTemplateRefusesIt requires the in-process
// renderer to fail, with render.ErrInvalidInput where the input is at
// fault, wherever `helm template` fails: values against the schema, a
// Kubernetes version outside the chart's kubeVersion, a library chart, a
// release name Helm does not admit.
func TestParityChartRefusedAsHelmTemplateRefusesIt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cases := []struct {
		name, chart string
		release     string // "" is "parity"
		edit        func(*render.Input)
		args        []string
		invalid     bool // the error wraps render.ErrInvalidInput
		message     string
	}{
		{"values against the schema", "parity", "", func(in *render.Input) {
			in.Helm.Parameters = []render.HelmParameter{{Name: "replicas", Value: "0"}}
		}, []string{"--set", "replicas=0"}, false, "values don't meet the specifications of the schema"},
		{"kubeVersion out of range", "parity", "", func(in *render.Input) { in.KubeVersion = "1.19.9" },
			[]string{"--kube-version", "1.19.9"}, true, "chart requires kubeVersion: >=1.20.0-0 which is incompatible with Kubernetes v1.19.9"},
		{"library chart", "library", "", func(*render.Input) {}, nil, true, "library charts are not installable"},
		{"release name", "parity", "Not_A_Release", func(in *render.Input) { in.Helm.ReleaseName = "Not_A_Release" },
			nil, true, "invalid release name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			release := c.release
			if release == "" {
				release = "parity"
			}
			_, err := helmTemplate(ctx, t, append([]string{release, "testdata/" + c.chart, "--namespace", "team"}, c.args...)...)
			if err == nil || !strings.Contains(err.Error(), c.message) {
				t.Fatalf("helm template: got %v, want an error containing %q", err, c.message)
			}
			in := parityInput(t, c.chart)
			c.edit(&in)
			objs, err := New(DefaultOptions()).Render(ctx, in)
			if err == nil {
				t.Fatalf("in-process rendered %d objects where helm template fails with %q", len(objs), c.message)
			}
			if !strings.Contains(err.Error(), c.message) {
				t.Errorf("in-process error %q does not say %q", err, c.message)
			}
			if c.invalid && !errors.Is(err, render.ErrInvalidInput) {
				t.Errorf("in-process error %q is not render.ErrInvalidInput", err)
			}
		})
	}
}
