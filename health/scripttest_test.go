package health

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/resource"
)

// TestShippedScripts runs every shipped script against its
// health_test.yaml, as Argo CD's CI does for resource_customizations.
func TestShippedScripts(t *testing.T) {
	report, err := RunScriptTests(context.Background(), BuiltinScripts(), DefaultLuaOptions())
	if err != nil {
		t.Fatal(err)
	}
	if report.Scripts < 20 {
		t.Fatalf("%d shipped scripts, want at least 20", report.Scripts)
	}
	if len(report.Results) < 3*report.Scripts-report.Scripts {
		t.Fatalf("only %d cases for %d scripts", len(report.Results), report.Scripts)
	}
	wildcard := false
	for _, r := range report.Results {
		if !r.Passed() {
			t.Error(r)
		}
		wildcard = wildcard || r.Script == "_.crossplane.io/_/health.lua"
	}
	if !wildcard {
		t.Error("the wildcard script _.crossplane.io/_ was not shipped")
	}
}

func TestRunScriptTests_ReportsFailuresPerCase(t *testing.T) {
	fsys := fstest.MapFS{
		"example.com/Widget/health.lua": {Data: []byte(`return {status = obj.status.phase, message = "m"}`)},
		"example.com/Widget/health_test.yaml": {Data: []byte(`tests:
- healthStatus: {status: Healthy, message: m}
  inputPath: testdata/ok.yaml
- healthStatus: {status: Healthy, message: m}
  inputPath: testdata/bad.yaml
- healthStatus: {status: Healthy, message: m}
  inputPath: testdata/missing.yaml
- healthStatus: {status: Healthy, message: m}
  inputPath: ../../../etc/passwd
`)},
		"example.com/Widget/testdata/ok.yaml":  {Data: []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nstatus: {phase: Healthy}\n")},
		"example.com/Widget/testdata/bad.yaml": {Data: []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nstatus: {phase: Exploded}\n")},
		"example.com/Gadget/health.lua":        {Data: []byte(`return {status = "Healthy"}`)},
		"example.com/Broken/health.lua":        {Data: []byte(`return (`)},
		"example.com/Broken/health_test.yaml":  {Data: []byte("tests: []\n")},
	}
	report, err := RunScriptTests(context.Background(), fsys, DefaultLuaOptions())
	if err != nil {
		t.Fatal(err)
	}
	if report.Scripts != 3 {
		t.Fatalf("found %d scripts", report.Scripts)
	}
	var lines []string
	for _, r := range report.Results {
		lines = append(lines, r.String())
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{
		"FAIL example.com/Broken/health.lua : lua script example.com/Broken/health.lua: syntax error",
		"FAIL example.com/Gadget/health.lua : example.com/Gadget/health_test.yaml: no health_test.yaml cases",
		"PASS example.com/Widget/health.lua testdata/ok.yaml",
		`FAIL example.com/Widget/health.lua testdata/bad.yaml: want "Healthy: m", got "Unknown: Lua returned an invalid health status"`,
		"FAIL example.com/Widget/health.lua testdata/missing.yaml: open example.com/Widget/testdata/missing.yaml: file does not exist",
		`FAIL example.com/Widget/health.lua ../../../etc/passwd: inputPath "../etc/passwd" leaves the tested folder`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q; got:\n%s", want, got)
		}
	}
	if n := len(report.Failed()); n != 5 {
		t.Errorf("%d failures, want 5", n)
	}
	for _, r := range report.Results {
		if strings.Contains(r.Input, "Gadget") && !errors.Is(r.Err, ErrNoTests) {
			t.Errorf("untested script not reported with ErrNoTests: %v", r.Err)
		}
	}
}

// loadScriptTestObject decodes a shipped script's test object.
func loadScriptTestObject(tb testing.TB, name string) *unstructured.Unstructured {
	tb.Helper()
	data, err := fs.ReadFile(BuiltinScripts(), name)
	if err != nil {
		tb.Fatal(err)
	}
	objs, err := resource.Decode(name, data, resource.DefaultDecodeOptions())
	if err != nil || len(objs) != 1 {
		tb.Fatal(err)
	}
	return objs[0]
}

// TestRunScriptTests_ExactScriptWinsOverWildcard: a case under a wildcard
// folder whose object has a script of its own runs that script, as Argo
// CD's resolver chooses an exact group/Kind before a wildcard.
func TestRunScriptTests_ExactScriptWinsOverWildcard(t *testing.T) {
	fsys := fstest.MapFS{
		"_.example.com/_/health.lua": {Data: []byte(`return {status = "Progressing", message = "wildcard"}`)},
		"_.example.com/_/health_test.yaml": {Data: []byte(`tests:
- healthStatus: {status: Healthy, message: own}
  inputPath: testdata/provider.yaml
- healthStatus: {status: Progressing, message: wildcard}
  inputPath: testdata/other.yaml
`)},
		"_.example.com/_/testdata/provider.yaml": {Data: []byte("apiVersion: pkg.example.com/v1\nkind: Provider\nmetadata: {name: p}\n")},
		"_.example.com/_/testdata/other.yaml":    {Data: []byte("apiVersion: x.example.com/v1\nkind: Thing\nmetadata: {name: t}\n")},
		"pkg.example.com/Provider/health.lua":    {Data: []byte(`return {status = "Healthy", message = "own"}`)},
		"pkg.example.com/Provider/health_test.yaml": {Data: []byte(`tests:
- healthStatus: {status: Healthy, message: own}
  inputPath: testdata/p.yaml
`)},
		"pkg.example.com/Provider/testdata/p.yaml": {Data: []byte("apiVersion: pkg.example.com/v1\nkind: Provider\nmetadata: {name: p}\n")},
	}
	report, err := RunScriptTests(context.Background(), fsys, DefaultLuaOptions())
	if err != nil {
		t.Fatal(err)
	}
	if f := report.Failed(); len(f) != 0 || len(report.Results) != 3 {
		t.Fatalf("failed %v of %d results", f, len(report.Results))
	}
}
