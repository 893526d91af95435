package health

import (
	"context"
	"fmt"
	"time"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/health/internal/luavm"
)

// LuaLimits bound every Lua health call: time (default 1 s), VM
// instructions, string bytes, table entries, call depth and stack size.
// Zero fields take the defaults of DefaultLuaLimits.
type LuaLimits = luavm.Limits

// DefaultLuaLimits returns the default Lua limits.
func DefaultLuaLimits() LuaLimits { return luavm.DefaultLimits() }

// LuaError is the error of a failed Lua health script. It names the script
// and wraps one of the ErrLua* sentinels; test with errors.Is.
type LuaError = luavm.Error

// Sentinel errors wrapped by *LuaError.
var (
	// ErrLuaSyntax: the script does not compile.
	ErrLuaSyntax = luavm.ErrSyntax
	// ErrLuaRuntime: the script raised an error.
	ErrLuaRuntime = luavm.ErrRuntime
	// ErrLuaTimeout: the script ran past LuaLimits.Timeout.
	ErrLuaTimeout = luavm.ErrTimeout
	// ErrLuaInstructionLimit: the script ran past LuaLimits.MaxInstructions.
	ErrLuaInstructionLimit = luavm.ErrInstructionLimit
	// ErrLuaMemoryLimit: the script built too long a string, or too many
	// string bytes or table entries in one call.
	ErrLuaMemoryLimit = luavm.ErrMemoryLimit
	// ErrLuaStackOverflow: recursion or the value stack went too deep.
	ErrLuaStackOverflow = luavm.ErrStackOverflow
	// ErrLuaForbidden: the script used something the sandbox removes
	// (dofile, load, require, io, os.execute, ...) or wrote to a shared
	// library table.
	ErrLuaForbidden = luavm.ErrForbidden
	// ErrLuaCanceled: the caller's context ended during the call.
	ErrLuaCanceled = luavm.ErrCanceled
)

// invalidStatusMessage is Argo CD's message for a script that returns a
// status outside the six codes.
const invalidStatusMessage = "Lua returned an invalid health status"

// LuaOptions configure the Lua interpreter of a Checker.
type LuaOptions struct {
	// Limits bound every call; see LuaLimits.
	Limits LuaLimits
	// Clock is what os.time and os.date read. Default time.Now; tests fix
	// it to make scripts that compare timestamps deterministic.
	Clock func() time.Time
	// CacheSize is how many compiled scripts are kept, keyed by source.
	// Default 1024, as in Argo CD.
	CacheSize int
}

// DefaultLuaOptions returns the options described on each field.
func DefaultLuaOptions() LuaOptions {
	return LuaOptions{Limits: DefaultLuaLimits(), Clock: time.Now, CacheSize: 1024}
}

// LuaEngine compiles and runs Lua health scripts under Argo CD's contract:
// the script sees the object as the global obj and returns a table with
// status and message. It is safe for concurrent use.
type LuaEngine struct{ vm *luavm.VM }

// NewLuaEngine returns an engine with the given options.
func NewLuaEngine(opts LuaOptions) *LuaEngine {
	return &LuaEngine{vm: luavm.New(luavm.Options{Limits: opts.Limits, Clock: luavm.Clock(opts.Clock), CacheSize: opts.CacheSize})}
}

// LuaScript is a compiled health script.
type LuaScript struct{ prog *luavm.Program }

// Name returns the name the script was compiled under.
func (s *LuaScript) Name() string { return s.prog.Name() }

// Compile compiles a script; name appears in errors. Compiled scripts are
// cached by source, so compiling the same source again is cheap.
func (e *LuaEngine) Compile(name, src string) (*LuaScript, error) {
	p, err := e.vm.Compile(name, src)
	if err != nil {
		return nil, err
	}
	return &LuaScript{prog: p}, nil
}

// Run evaluates the script on obj. A script that returns a table whose
// status is not one of the six codes yields Unknown "Lua returned an
// invalid health status", as in Argo CD. A script that fails, or returns
// something other than a table, yields an error (a *LuaError for failures).
func (e *LuaEngine) Run(ctx context.Context, script *LuaScript, obj *unstructured.Unstructured) (*Status, error) {
	var st *Status
	err := e.vm.Run(ctx, script.prog, obj.Object, func(ret lua.LValue) error {
		t, ok := ret.(*lua.LTable)
		if !ok {
			return &LuaError{Script: script.Name(), Kind: ErrLuaRuntime, Detail: fmt.Sprintf("script returned %s, want a table with status and message", ret.Type())}
		}
		code := Code(luaString(t.RawGetString("status")))
		msg := luaString(t.RawGetString("message"))
		if !code.Valid() {
			st = &Status{Code: Unknown, Message: invalidStatusMessage}
			return nil
		}
		st = &Status{Code: code, Message: msg}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

func luaString(v lua.LValue) string {
	switch v := v.(type) {
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return v.String()
	}
	return ""
}
