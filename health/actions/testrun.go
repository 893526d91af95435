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

	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/health/internal/argotest"
)

// TestFile is Argo CD's actions/action_test.yaml.
type TestFile struct {
	// DiscoveryTests check what discovery.lua offers for an input.
	DiscoveryTests []DiscoveryTest `json:"discoveryTests"`
	// ActionTests check what an action.lua returns for an input.
	ActionTests []ActionTest `json:"actionTests"`
}

// DiscoveryTest is one discovery case: every action discovery offers for
// the input must be one of Result (as in Argo CD's test, Result may list
// more).
type DiscoveryTest struct {
	// InputPath is the object's YAML file, relative to the actions folder.
	InputPath string `json:"inputPath"`
	// Result lists the actions discovery may offer, in any order; each
	// offered one must equal an entry in name, disabled, iconClass,
	// displayName and param names.
	Result []Action `json:"result"`
}

// ActionTest is one action case.
type ActionTest struct {
	// Action is the action's name.
	Action string `json:"action"`
	// InputPath is the object's YAML file, relative to the actions folder.
	InputPath string `json:"inputPath"`
	// ExpectedOutputPath is a YAML file, relative to the actions folder:
	// the changed object (the older form), or, when the file starts with
	// '-', a list of {k8sOperation, unstructuredObj} (the form of actions
	// that return impacted resources).
	ExpectedOutputPath string `json:"expectedOutputPath"`
	// Parameters are passed as actionParams.
	Parameters map[string]string `json:"parameters"`
	// ExpectedErrorMessage, when set, is the exact message the action
	// must fail with: what the script raised (error("...", 0)), as Argo
	// CD's test compares it.
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

// RunTests runs Argo CD format action tests and judges them as Argo CD's
// own test does (util/lua/custom_actions_test.go): for every
// <group>/<Kind>/actions folder under root it loads the scripts (as
// LoadDir does) and runs each case of action_test.yaml next to them.
// Action cases call action.lua directly with the case's parameters
// (whether or not discovery would enable the action); every resource the
// action returns is compared with the object of expectedOutputPath of the
// same kind and name (a Job or Workflow the action creates, whose name is
// generated, with the one whose name starts with the source's), after
// Argo CD's test normalisation of time stamps, and must agree with every
// field that object sets. A case with expectedErrorMessage must fail with
// exactly that message. Scripts run at TestClock whatever opts.Lua.Clock
// says; only opts.Lua's limits and cache size are read. Unlike Argo CD's
// test, an actions folder without action_test.yaml is reported
// (ErrNoTests), and a result the engine refuses (a changed system field,
// another object patched) fails its case with that typed error.
//
// The error is non-nil only when root cannot be walked; problems with one
// folder or case are reported in its result.
func RunTests(ctx context.Context, root fs.FS, opts Options) (TestReport, error) {
	var report TestReport
	folders, err := argotest.Folders(root, func(p string, d fs.DirEntry) bool {
		if !d.IsDir() || d.Name() != "actions" {
			return false
		}
		_, err := fs.Stat(root, path.Join(p, "discovery.lua"))
		return err == nil
	})
	if err != nil {
		return report, fmt.Errorf("actions: walking action tests: %w", err)
	}
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
	var file TestFile
	cases := func() int { return len(file.DiscoveryTests) + len(file.ActionTests) }
	if err := argotest.ReadTests(root, path.Join(dir, "action_test.yaml"), &file, cases, ErrNoTests); err != nil {
		return fail(err)
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

// runDiscoveryCase judges discovery as Argo CD's test does: every action
// discovery offers must be one of the expected ones, equal in every field
// (name, disabled, iconClass, displayName, param names); expected actions
// discovery does not offer are not an error there either.
func runDiscoveryCase(ctx context.Context, r *Runner, ks *kindScripts, root fs.FS, dir string, tc DiscoveryTest) error {
	obj, err := argotest.ReadObject(root, dir, tc.InputPath, dir)
	if err != nil {
		return err
	}
	got, err := r.discover(ctx, ks, obj)
	if err != nil {
		return err
	}
	for _, a := range got {
		if !slices.ContainsFunc(tc.Result, func(w Action) bool { return sameAction(w, a) }) {
			return fmt.Errorf("discovery offers %+v, not in the expected result %s (got %s)", a, names(tc.Result), names(got))
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

// sameAction is the equality of Argo CD's ResourceAction, whose params
// carry only a name (v3.6's ResourceActionParam): a param's type and
// default are not compared.
func sameAction(a, b Action) bool {
	return a.Name == b.Name && a.Disabled == b.Disabled && a.IconClass == b.IconClass &&
		a.DisplayName == b.DisplayName &&
		slices.EqualFunc(a.Params, b.Params, func(x, y Param) bool { return x.Name == y.Name })
}

// runActionCase judges one action as Argo CD's test does: the action.lua
// runs with the case's parameters (whether or not discovery would enable
// it); with expectedErrorMessage it must fail with exactly that message;
// otherwise every resource it returns (a patch that changes nothing
// included) is compared with its expected object (matchExpected,
// compareEntry). A result the engine refuses (ErrForbiddenField,
// ErrIdentityChanged, ...) fails the case with that typed error.
func runActionCase(ctx context.Context, r *Runner, ks *kindScripts, root fs.FS, dir string, tc ActionTest) error {
	prog := ks.actions[tc.Action]
	if prog == nil {
		return fmt.Errorf("%w: %q has no action.lua", ErrUnknownAction, tc.Action)
	}
	source, err := argotest.ReadObject(root, dir, tc.InputPath, dir)
	if err != nil {
		return err
	}
	params := map[string]any{}
	for k, v := range tc.Parameters {
		params[k] = v
	}
	_, ret, err := r.runScript(ctx, prog, source.DeepCopy(), params)
	if tc.ExpectedErrorMessage != "" {
		if err == nil {
			return fmt.Errorf("want the error %q, the action succeeded", tc.ExpectedErrorMessage)
		}
		if msg := scriptMessage(err); msg != tc.ExpectedErrorMessage {
			return fmt.Errorf("want the error %q, got %q", tc.ExpectedErrorMessage, msg)
		}
		return nil
	}
	if err != nil {
		return err
	}
	p, err := argotest.CaseFile("expectedOutputPath", dir, tc.ExpectedOutputPath, dir)
	if err != nil {
		return err
	}
	data, err := argotest.ReadLimited(root, p)
	if err != nil {
		return err
	}
	want, err := parseExpected(p, data)
	if err != nil {
		return err
	}
	for i, e := range testEntries(ret) {
		w := matchExpected(want, source, e.obj)
		if w == nil {
			return fmt.Errorf("returned resource %d (%s %s %s/%s) matches no object of %s", i+1, e.op, e.obj.GroupVersionKind(), e.obj.GetNamespace(), e.obj.GetName(), tc.ExpectedOutputPath)
		}
		if err := compareEntry(w, e); err != nil {
			return fmt.Errorf("returned resource %d differs from %s: %w", i+1, tc.ExpectedOutputPath, err)
		}
	}
	return nil
}

// scriptMessage is the message Argo CD's test compares with
// expectedErrorMessage: what the script raised (error("...", 0) yields
// the text alone), or the error itself when the script did not raise it.
func scriptMessage(err error) string {
	var le *health.LuaError
	if errors.As(err, &le) && errors.Is(le.Kind, health.ErrLuaRuntime) && le.Detail != "" {
		return le.Detail
	}
	return err.Error()
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
