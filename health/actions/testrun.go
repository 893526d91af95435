package actions

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/resource"
)

// TestFile is Argo CD's actions/action_test.yaml.
type TestFile struct {
	// DiscoveryTests check what discovery.lua offers for an input.
	DiscoveryTests []DiscoveryTest `json:"discoveryTests"`
	// ActionTests check what an action.lua returns for an input.
	ActionTests []ActionTest `json:"actionTests"`
}

// DiscoveryTest is one discovery case: the actions offered for the input,
// compared by name and disabled (and the other fields when given).
type DiscoveryTest struct {
	// InputPath is the object's YAML file, relative to the actions folder.
	InputPath string `json:"inputPath"`
	// Result is the expected list of actions, in any order.
	Result []Action `json:"result"`
}

// ActionTest is one action case.
type ActionTest struct {
	// Action is the action's name.
	Action string `json:"action"`
	// InputPath is the object's YAML file, relative to the actions folder.
	InputPath string `json:"inputPath"`
	// ExpectedOutputPath is a YAML file, relative to the actions folder,
	// holding the objects the action returns: the changed object for the
	// older form; for the list form one document per impacted resource,
	// in order.
	ExpectedOutputPath string `json:"expectedOutputPath"`
	// Parameters are passed as actionParams.
	Parameters map[string]string `json:"parameters"`
	// ExpectedErrorMessage, when set, is a substring the error must
	// contain; the action must then fail.
	ExpectedErrorMessage string `json:"expectedErrorMessage"`
}

// TestClock is the time action tests run at (os.time and os.date):
// 2024-01-01T00:00:00Z, so restartedAt stamps
// and generated names can be written in expected outputs.
var TestClock = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// TestResult is the outcome of one case.
type TestResult struct {
	// Folder is the actions folder, relative to the tested root.
	Folder string
	// Case is "discovery <input>" or "<action> <input>".
	Case string
	// Err is why the case failed, or nil when it passed.
	Err error
}

// Passed reports whether the case passed.
func (r TestResult) Passed() bool { return r.Err == nil }

// String formats the result as one line, "PASS folder case" or "FAIL
// folder case: why".
func (r TestResult) String() string {
	if r.Err != nil {
		return fmt.Sprintf("FAIL %s %s: %v", r.Folder, r.Case, r.Err)
	}
	return fmt.Sprintf("PASS %s %s", r.Folder, r.Case)
}

// TestReport is the outcome of RunTests.
type TestReport struct {
	// Results lists every case in path order.
	Results []TestResult
	// Folders is how many actions folders were found.
	Folders int
}

// Failed returns the cases that did not pass.
func (r TestReport) Failed() []TestResult {
	var out []TestResult
	for _, res := range r.Results {
		if !res.Passed() {
			out = append(out, res)
		}
	}
	return out
}

// ErrNoTests is reported for an actions folder without action_test.yaml,
// or one that lists no cases: untested actions are not silently passed.
var ErrNoTests = errors.New("no action_test.yaml cases")

// maxTestInput bounds each input, expected output and test file.
const maxTestInput = 4 << 20

// RunTests runs Argo CD format action tests: for every
// <group>/<Kind>/actions folder under root it loads the scripts (as
// LoadDir does) and runs each case of action_test.yaml next to them.
// Action cases call action.lua directly with the case's parameters (the
// way Argo CD's own test does, whether or not discovery would enable the
// action) and compare the returned objects with expectedOutputPath; a case
// with expectedErrorMessage must fail with an error containing it. Scripts
// run at TestClock whatever opts.Lua.Clock says; only opts.Lua's limits
// and cache size are read.
//
// The error is non-nil only when root cannot be walked; problems with one
// folder or case are reported in its result.
func RunTests(ctx context.Context, root fs.FS, opts Options) (TestReport, error) {
	var report TestReport
	var folders []string
	err := fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "actions" {
			if _, err := fs.Stat(root, path.Join(p, "discovery.lua")); err == nil {
				folders = append(folders, p)
			}
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return report, fmt.Errorf("actions: walking action tests: %w", err)
	}
	slices.Sort(folders)
	report.Folders = len(folders)
	lopts := opts.Lua
	lopts.Clock = func() time.Time { return TestClock }
	for _, dir := range folders {
		report.Results = append(report.Results, runFolder(ctx, root, dir, lopts)...)
	}
	return report, nil
}

func runFolder(ctx context.Context, root fs.FS, dir string, lopts health.LuaOptions) []TestResult {
	fail := func(err error) []TestResult { return []TestResult{{Folder: dir, Case: "load", Err: err}} }
	defs, err := loadActionsDir(root, dir)
	if err != nil {
		return fail(err)
	}
	key := health.ScriptKey(path.Dir(dir))
	r, err := New(Options{Overrides: map[string]Definitions{key: defs}, DisableBuiltin: true, Lua: lopts})
	if err != nil {
		return fail(err)
	}
	ks := r.exact[key]
	if ks == nil && len(r.wild) == 1 {
		ks = r.wild[0]
	}
	raw, err := readLimited(root, path.Join(dir, "action_test.yaml"))
	if errors.Is(err, fs.ErrNotExist) {
		return fail(ErrNoTests)
	}
	if err != nil {
		return fail(err)
	}
	var file TestFile
	if err := yaml.UnmarshalStrict(raw, &file); err != nil {
		return fail(fmt.Errorf("action_test.yaml: %w", err))
	}
	if len(file.DiscoveryTests)+len(file.ActionTests) == 0 {
		return fail(ErrNoTests)
	}
	var out []TestResult
	for _, tc := range file.DiscoveryTests {
		res := TestResult{Folder: dir, Case: "discovery " + tc.InputPath}
		res.Err = runDiscoveryCase(ctx, r, ks, root, dir, tc)
		out = append(out, res)
	}
	for _, tc := range file.ActionTests {
		res := TestResult{Folder: dir, Case: tc.Action + " " + tc.InputPath}
		res.Err = runActionCase(ctx, r, ks, root, dir, tc)
		out = append(out, res)
	}
	return out
}

func runDiscoveryCase(ctx context.Context, r *Runner, ks *kindScripts, root fs.FS, dir string, tc DiscoveryTest) error {
	objs, err := readObjects(root, dir, tc.InputPath)
	if err != nil {
		return err
	}
	if len(objs) != 1 {
		return fmt.Errorf("%s: want one object, found %d", tc.InputPath, len(objs))
	}
	got, err := r.discover(ctx, ks, objs[0])
	if err != nil {
		return err
	}
	byName := map[string]Action{}
	for _, a := range got {
		byName[a.Name] = a
	}
	if len(got) != len(tc.Result) {
		return fmt.Errorf("want %d actions, got %d (%s)", len(tc.Result), len(got), names(got))
	}
	for _, want := range tc.Result {
		a, ok := byName[want.Name]
		switch {
		case !ok:
			return fmt.Errorf("action %q not offered (got %s)", want.Name, names(got))
		case a.Disabled != want.Disabled:
			return fmt.Errorf("action %q: want disabled=%v, got %v", want.Name, want.Disabled, a.Disabled)
		case want.DisplayName != "" && a.DisplayName != want.DisplayName,
			want.IconClass != "" && a.IconClass != want.IconClass,
			want.Params != nil && !slices.Equal(a.Params, want.Params):
			return fmt.Errorf("action %q: want %+v, got %+v", want.Name, want, a)
		}
	}
	return nil
}

func names(list []Action) string {
	var s []string
	for _, a := range list {
		s = append(s, a.Name)
	}
	return "[" + strings.Join(s, " ") + "]"
}

func runActionCase(ctx context.Context, r *Runner, ks *kindScripts, root fs.FS, dir string, tc ActionTest) error {
	prog := ks.actions[tc.Action]
	if prog == nil {
		return fmt.Errorf("%w: %q has no action.lua", ErrUnknownAction, tc.Action)
	}
	objs, err := readObjects(root, dir, tc.InputPath)
	if err != nil {
		return err
	}
	if len(objs) != 1 {
		return fmt.Errorf("%s: want one object, found %d", tc.InputPath, len(objs))
	}
	params := map[string]any{}
	for k, v := range tc.Parameters {
		params[k] = v
	}
	impacted, err := r.runScript(ctx, prog, objs[0], params)
	if tc.ExpectedErrorMessage != "" {
		if err == nil {
			return fmt.Errorf("want an error containing %q, the action succeeded", tc.ExpectedErrorMessage)
		}
		if !strings.Contains(err.Error(), tc.ExpectedErrorMessage) {
			return fmt.Errorf("want an error containing %q, got %v", tc.ExpectedErrorMessage, err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	want, err := readObjects(root, dir, tc.ExpectedOutputPath)
	if err != nil {
		return err
	}
	got := make([]*unstructured.Unstructured, 0, len(impacted))
	for _, im := range impacted {
		got = append(got, im.Object)
	}
	if len(got) == 0 {
		got = objs // the action changed nothing: the output is the input
	}
	if len(got) != len(want) {
		return fmt.Errorf("want %d objects, the action returned %d", len(want), len(got))
	}
	for i := range want {
		if !jsonEqual(normalise(want[i].Object), normalise(got[i].Object)) {
			w, _ := yaml.Marshal(want[i].Object)
			g, _ := yaml.Marshal(got[i].Object)
			return fmt.Errorf("object %d differs from %s:\nwant:\n%s\ngot:\n%s", i+1, tc.ExpectedOutputPath, w, g)
		}
	}
	return nil
}

// normalise drops empty maps and lists, which YAML fixtures and Lua
// results spell differently ({} and [], or not at all).
func normalise(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range t {
			n := normalise(e)
			if m, ok := n.(map[string]any); ok && len(m) == 0 {
				continue
			}
			if l, ok := n.([]any); ok && len(l) == 0 {
				continue
			}
			out[k] = n
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = normalise(e)
		}
		return out
	}
	return v
}

func readObjects(root fs.FS, dir, rel string) ([]*unstructured.Unstructured, error) {
	p := path.Join(dir, rel)
	if rel == "" || !fs.ValidPath(p) || !strings.HasPrefix(p, dir+"/") {
		return nil, fmt.Errorf("path %q is empty or leaves the actions folder", rel)
	}
	data, err := readLimited(root, p)
	if err != nil {
		return nil, err
	}
	return resource.Decode(p, data, resource.DefaultDecodeOptions())
}

func readLimited(fsys fs.FS, name string) ([]byte, error) {
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if st.Size() > maxTestInput {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, maxTestInput)
	}
	return fs.ReadFile(fsys, name)
}
