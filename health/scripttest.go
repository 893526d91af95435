package health

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/kubegitops/gitops/health/internal/argotest"
)

// ScriptTestFile is Argo CD's health_test.yaml: a list of cases, each an
// input object (a path relative to the script's folder) and the status the
// script must return for it.
type ScriptTestFile struct {
	// Tests are the cases.
	Tests []ScriptTestCase `json:"tests"`
}

// ScriptTestCase is one case of a health_test.yaml.
type ScriptTestCase struct {
	// HealthStatus is the expected result; status and message must both
	// match exactly, as in Argo CD's own test.
	HealthStatus Status `json:"healthStatus"`
	// InputPath is the object's YAML file, relative to the script's folder.
	InputPath string `json:"inputPath"`
}

// ScriptTestResult is the outcome of one case.
type ScriptTestResult struct {
	// Script is the path of the health.lua, relative to the tested root.
	Script string
	// Input is the case's inputPath, relative to the script's folder.
	Input string
	// Want is the expected status.
	Want Status
	// Got is what the script returned (zero when it failed).
	Got Status
	// Err is why the case could not run or the script failed, or nil.
	Err error
}

// Passed reports whether the case ran and returned the expected status.
func (r ScriptTestResult) Passed() bool { return r.Err == nil && r.Got == r.Want }

// String formats the result as one line: "PASS script input" or "FAIL
// script input: want ..., got ...".
func (r ScriptTestResult) String() string {
	switch {
	case r.Err != nil:
		return fmt.Sprintf("FAIL %s %s: %v", r.Script, r.Input, r.Err)
	case r.Got != r.Want:
		return fmt.Sprintf("FAIL %s %s: want %q, got %q", r.Script, r.Input, r.Want.String(), r.Got.String())
	default:
		return fmt.Sprintf("PASS %s %s", r.Script, r.Input)
	}
}

// ScriptTestReport is the outcome of RunScriptTests.
type ScriptTestReport struct {
	// Results lists every case in path order.
	Results []ScriptTestResult
	// Scripts is how many health.lua files were found.
	Scripts int
}

// Failed returns the cases that did not pass.
func (r ScriptTestReport) Failed() []ScriptTestResult {
	var out []ScriptTestResult
	for _, res := range r.Results {
		if !res.Passed() {
			out = append(out, res)
		}
	}
	return out
}

// ErrNoTests is returned by RunScriptTests when a health.lua has no
// health_test.yaml next to it, or a test file lists no cases: a script
// nobody tests is reported rather than silently passed.
var ErrNoTests = errors.New("no health_test.yaml cases")

// RunScriptTests runs Argo CD format health script tests: for every
// <group>/<Kind>/health.lua under root it reads health_test.yaml next to
// it and, for each case, decodes the inputPath object, runs the script
// and compares the returned status and message with healthStatus. The
// script is the folder's own, except where Argo CD's resolver would choose
// another: a case under a wildcard folder (_.crossplane.io/_) whose object
// has a script of its own exact group/Kind in the tree runs that one, as
// exact matches win over wildcards. Scripts written and tested for Argo
// CD's resource_customizations run unchanged.
//
// The error is non-nil only when root cannot be walked; problems with one
// script or case (a syntax error, a missing file, no tests) are reported
// in that case's result, so one bad script does not hide the others.
func RunScriptTests(ctx context.Context, root fs.FS, opts LuaOptions) (ScriptTestReport, error) {
	engine := NewLuaEngine(opts)
	var report ScriptTestReport
	folders, err := argotest.Folders(root, func(_ string, d fs.DirEntry) bool { return !d.IsDir() && d.Name() == "health.lua" })
	if err != nil {
		return report, fmt.Errorf("health: walking script tests: %w", err)
	}
	scripts := make([]string, len(folders))
	for i, dir := range folders {
		scripts[i] = path.Join(dir, "health.lua")
	}
	report.Scripts = len(scripts)
	exact := exactScripts(engine, root, scripts)
	for _, p := range scripts {
		report.Results = append(report.Results, runScriptTest(ctx, engine, root, p, exact)...)
	}
	return report, nil
}

// exactScripts compiles, lazily, the scripts of the tree whose folder names
// one group/Kind (no wildcard), by ScriptKey: the scripts Argo CD's
// resolver prefers over a wildcard one.
func exactScripts(engine *LuaEngine, root fs.FS, scripts []string) func(key string) *LuaScript {
	paths := map[string]string{}
	for _, p := range scripts {
		dir := path.Dir(p)
		group, kind := path.Dir(dir), path.Base(dir)
		if group == "." || strings.Contains(group, "/") {
			continue
		}
		if key := ScriptKey(group + "/" + kind); !strings.Contains(key, "*") {
			paths[key] = p
		}
	}
	compiled := map[string]*LuaScript{}
	return func(key string) *LuaScript {
		p, ok := paths[key]
		if !ok {
			return nil
		}
		if s, done := compiled[key]; done {
			return s
		}
		var s *LuaScript
		if src, err := argotest.ReadLimited(root, p); err == nil {
			s, _ = engine.Compile(p, string(src))
		}
		compiled[key] = s
		return s
	}
}

func runScriptTest(ctx context.Context, engine *LuaEngine, root fs.FS, scriptPath string, exact func(string) *LuaScript) []ScriptTestResult {
	dir := path.Dir(scriptPath)
	fail := func(input string, err error) []ScriptTestResult {
		return []ScriptTestResult{{Script: scriptPath, Input: input, Err: err}}
	}
	src, err := argotest.ReadLimited(root, scriptPath)
	if err != nil {
		return fail("", err)
	}
	script, err := engine.Compile(scriptPath, string(src))
	if err != nil {
		return fail("", err)
	}
	var file ScriptTestFile
	if err := argotest.ReadTests(root, path.Join(dir, "health_test.yaml"), &file, func() int { return len(file.Tests) }, ErrNoTests); err != nil {
		return fail("", err)
	}
	var out []ScriptTestResult
	for _, tc := range file.Tests {
		res := ScriptTestResult{Script: scriptPath, Input: tc.InputPath, Want: tc.HealthStatus}
		res.Got, res.Err = runScriptCase(ctx, engine, script, root, dir, tc.InputPath, exact)
		out = append(out, res)
	}
	return out
}

func runScriptCase(ctx context.Context, engine *LuaEngine, script *LuaScript, root fs.FS, dir, input string, exact func(string) *LuaScript) (Status, error) {
	obj, err := argotest.ReadObject(root, dir, input, "")
	if err != nil {
		return Status{}, err
	}
	if own := exact(gkKey(obj.GroupVersionKind().GroupKind())); own != nil {
		script = own
	}
	st, err := engine.Run(ctx, script, obj)
	if err != nil {
		return Status{}, err
	}
	return *st, nil
}
