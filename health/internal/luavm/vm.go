package luavm

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Program is a compiled, rewritten script. It is immutable and may run on
// many goroutines at once.
type Program struct {
	name  string
	proto *lua.FunctionProto
}

// Name returns the name the program was compiled under.
func (p *Program) Name() string { return p.name }

// Options configure a VM.
type Options struct {
	// Limits bound every call; zero fields take DefaultLimits.
	Limits Limits
	// Clock gives os.time and os.date the time. Default time.Now.
	Clock Clock
	// CacheSize is how many compiled scripts are kept, keyed by their
	// source. Default 1024, as in Argo CD.
	CacheSize int
	// RequireOS makes require("os") return the sandbox's os table (time,
	// date, clock, difftime), as Argo CD offers to resource actions, which
	// commonly start with `local os = require("os")`. Any other module
	// still fails with ErrForbidden. Default false: require is forbidden.
	RequireOS bool
}

// DefaultOptions returns the options described on each field of Options.
func DefaultOptions() Options {
	return Options{Limits: DefaultLimits(), Clock: time.Now, CacheSize: 1024}
}

// VM compiles and runs sandboxed scripts. It is safe for concurrent use:
// each call borrows an interpreter from a pool.
type VM struct {
	limits    Limits
	clock     Clock
	requireOS bool
	cache     *lru.Cache[[sha256.Size]byte, *Program]
	pool      sync.Pool
}

// New returns a VM.
func New(opts Options) *VM {
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.CacheSize <= 0 {
		opts.CacheSize = 1024
	}
	cache, _ := lru.New[[sha256.Size]byte, *Program](opts.CacheSize) // fails only for size <= 0
	vm := &VM{limits: opts.Limits.withDefaults(), clock: opts.Clock, requireOS: opts.RequireOS, cache: cache}
	vm.pool.New = func() any { return newSandbox(vm.limits, vm.clock, vm.requireOS) }
	return vm
}

// Limits returns the limits the VM applies.
func (vm *VM) Limits() Limits { return vm.limits }

// Compile parses, rewrites and compiles src, or returns the cached program
// for the same source. name appears in errors.
func (vm *VM) Compile(name, src string) (*Program, error) {
	key := sha256.Sum256([]byte(src))
	if p, ok := vm.cache.Get(key); ok {
		if p.name == name {
			return p, nil
		}
		return &Program{name: name, proto: p.proto}, nil
	}
	p, err := compile(name, src, vm.limits.MaxSourceBytes)
	if err != nil {
		return nil, err
	}
	vm.cache.Add(key, p)
	return p, nil
}

func compile(name, src string, maxBytes int) (p *Program, err error) {
	if len(src) > maxBytes {
		return nil, &Error{Script: name, Kind: ErrSyntax, Detail: fmt.Sprintf("script is %d bytes, over the limit of %d", len(src), maxBytes)}
	}
	defer func() {
		// The parser and compiler panic on some inputs; a script is data.
		if r := recover(); r != nil {
			p, err = nil, &Error{Script: name, Kind: ErrSyntax, Detail: fmt.Sprint(r)}
		}
	}()
	chunk, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		return nil, &Error{Script: name, Kind: ErrSyntax, Detail: strings.Join(strings.Fields(err.Error()), " ")}
	}
	chunk = rewriteChunk(chunk)
	proto, err := lua.Compile(chunk, name)
	if err != nil {
		return nil, &Error{Script: name, Kind: ErrSyntax, Detail: strings.Join(strings.Fields(err.Error()), " ")}
	}
	// The main chunk is a vararg function, and Lua 5.0 compatibility would
	// build an "arg" table for it on every call. Scripts get no arguments:
	// arg is nil, and the call allocates nothing for it.
	proto.IsVarArg &^= lua.VarArgNeedsArg
	return &Program{name: name, proto: proto}, nil
}

// Run calls prog with the global obj bound to a fresh Lua copy of obj, and
// passes the script's first return value to read, which must copy out what
// it needs before returning (the value does not outlive the call).
func (vm *VM) Run(ctx context.Context, prog *Program, obj map[string]any, read func(ret lua.LValue) error) error {
	return vm.run(ctx, prog, obj, nil, func(_ *sandbox, _ *lua.LState, ret lua.LValue) error { return read(ret) })
}

// Eval calls prog with the global obj bound to a fresh Lua copy of obj and
// each entry of globals bound to a Lua copy of its value (JSON-shaped Go
// values: maps, slices, strings, numbers, booleans), and returns the
// script's first return value converted back to JSON-shaped Go values by
// the rules of ToGo. A result that cannot be converted fails with an
// *Error of kind ErrRuntime (ErrMemoryLimit when it is too large).
func (vm *VM) Eval(ctx context.Context, prog *Program, obj map[string]any, globals map[string]any) (any, error) {
	var out any
	err := vm.run(ctx, prog, obj, globals, func(s *sandbox, L *lua.LState, ret lua.LValue) error {
		c := converter{s: s, L: L, script: prog.name, budget: maxResultNodes}
		v, err := c.toGo(ret, 0)
		out = v
		return err
	})
	return out, err
}

func (vm *VM) run(ctx context.Context, prog *Program, obj map[string]any, globals map[string]any, read func(s *sandbox, L *lua.LState, ret lua.LValue) error) (err error) {
	s := vm.pool.Get().(*sandbox)
	healthy := false
	defer func() {
		if r := recover(); r != nil {
			err = &Error{Script: prog.name, Kind: ErrRuntime, Detail: fmt.Sprint(r)}
			healthy = false
		}
		if healthy {
			vm.pool.Put(s)
		} else {
			s.L.Close()
		}
	}()
	L := s.L
	s.budget.reset(ctx, time.Now())
	s.rng = 0x9E3779B97F4A7C15
	s.ids = nil
	L.SetContext(s.budget)
	defer L.RemoveContext()

	env := L.CreateTable(0, 2+len(globals))
	env.Metatable = s.envMeta
	env.RawSetString("_G", env)
	clear(s.pending)
	if obj == nil {
		obj = map[string]any{}
	}
	env.RawSetString("obj", s.stub(L, obj, 0))
	for name, v := range globals {
		env.RawSetString(name, s.toLua(L, v, 0))
	}
	fn := L.NewFunctionFromProto(prog.proto)
	fn.Env = env

	L.Push(fn)
	callErr := L.PCall(0, 1, nil)
	if callErr != nil || s.budget.err != nil {
		L.SetTop(0)
		return s.classify(prog.name, callErr)
	}
	ret := L.Get(-1)
	L.SetTop(0)
	s.materialize(L, ret)
	if err := read(s, L, ret); err != nil {
		return err
	}
	// A state that met no error has an empty stack and untouched
	// libraries: it may serve the next call. Drop what still points into
	// this call's object, so the pool does not keep it alive.
	clear(s.pending)
	s.ids = nil
	healthy = true
	return nil
}

// classify turns what PCall reported into a typed *Error.
func (s *sandbox) classify(name string, callErr error) error {
	detail := ""
	if callErr != nil {
		detail = callErr.Error()
		var api *lua.ApiError
		if errors.As(callErr, &api) && api.Object != nil {
			switch obj := api.Object.(type) {
			case lua.LString, lua.LNumber:
				detail = obj.String()
			default:
				// A table or function raised as an error prints as its
				// address, which differs between runs.
				detail = "error object of type " + obj.Type().String()
			}
		}
	}
	if kind := s.budget.err; kind != nil {
		if s.budget.detail != "" {
			detail = s.budget.detail
		}
		return &Error{Script: name, Kind: kind, Detail: firstLine(detail)}
	}
	if err := s.budget.parent.Err(); err != nil {
		return &Error{Script: name, Kind: ErrCanceled, Detail: err.Error()}
	}
	kind := ErrRuntime
	if strings.Contains(detail, "stack overflow") || strings.Contains(detail, "registry overflow") ||
		strings.Contains(detail, "callstack overflow") {
		kind = ErrStackOverflow
	}
	return &Error{Script: name, Kind: kind, Detail: firstLine(detail)}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	const max = 512
	if len(s) > max {
		s = s[:max] + "..."
	}
	return s
}
