package health

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// sandboxAttacks are user-asks S15's hostile scripts, each with the typed
// error it must fail with.
var sandboxAttacks = []struct {
	name, src string
	want      error
}{
	{"os.execute", `os.execute("touch /tmp/pwned") return {status = "Healthy"}`, ErrLuaForbidden},
	{"io.open", `local f = io.open("/etc/passwd", "r") return {status = "Healthy", message = f:read("*a")}`, ErrLuaForbidden},
	{"dofile", `dofile("/etc/passwd")`, ErrLuaForbidden},
	{"loadfile", `local f = loadfile("/etc/passwd") return f()`, ErrLuaForbidden},
	{"load", `return load("return 1")()`, ErrLuaForbidden},
	{"require from disk", `local m = require("x") return m`, ErrLuaForbidden},
	{"string.rep bomb", `local s = string.rep("x", 2^40) return {status = "Healthy", message = s}`, ErrLuaMemoryLimit},
	{"concat doubling bomb", `local s = "x" while true do s = s .. s end`, ErrLuaMemoryLimit},
	{"while true", `while true do end`, ErrLuaInstructionLimit},
	{"table growth", `local t = {} while true do t[#t+1] = obj end`, ErrLuaMemoryLimit},
	{"pattern backtracking", `return {status = "Healthy", message = tostring(string.find(string.rep("a", 100000), ".-.-.-b"))}`, ErrLuaInstructionLimit},
	{"deep recursion", `local function f(n) return f(n + 1) + 1 end return f(0)`, ErrLuaStackOverflow},
	{"metatable on shared string library", `setmetatable(string, {__index = function() return "x" end})`, ErrLuaForbidden},
	{"overwrite shared library", `string.find = function() return 1 end`, ErrLuaForbidden},
}

// TestLuaSandbox_AttacksFailTypedAndFast runs each attack through the
// checker, as an override a hostile user could configure: each must fail
// with its typed error, within the time limit, and name the object.
func TestLuaSandbox_AttacksFailTypedAndFast(t *testing.T) {
	for _, a := range sandboxAttacks {
		t.Run(a.name, func(t *testing.T) {
			opts := DefaultOptions()
			opts.Overrides = map[string]string{"example.com/Widget": a.src}
			// Each attack must be stopped by its own limit, so the clock is
			// taken out of the race; the call must still end well within
			// the default 1 s (scaled under the race detector).
			limit := opts.Lua.Limits.Timeout
			opts.Lua.Limits.Timeout = time.Minute
			c := mustChecker(t, opts)
			start := time.Now()
			st, err := c.Check(object("example.com/v1", "Widget", nil))
			if elapsed := time.Since(start); elapsed > limit*slowdown {
				t.Fatalf("took %v, over the %v limit", elapsed, limit)
			}
			if !errors.Is(err, a.want) {
				t.Fatalf("got %v, want %v", err, a.want)
			}
			if st == nil || st.Code != Unknown {
				t.Fatalf("status %v, want Unknown", st)
			}
		})
	}
}

// TestLuaSandbox_AttackDoesNotPoisonLaterCalls checks that after every
// attack the same engine still runs an honest script correctly.
func TestLuaSandbox_AttackDoesNotPoisonLaterCalls(t *testing.T) {
	engine := NewLuaEngine(DefaultLuaOptions())
	honest, err := engine.Compile("honest", `
local n = 0
for k, v in pairs(obj.metadata) do n = n + 1 end
return {status = "Healthy", message = string.format("%d %s", n, string.upper(obj.metadata.name))}`)
	if err != nil {
		t.Fatal(err)
	}
	obj := object("example.com/v1", "Widget", nil)
	want := Status{Code: Healthy, Message: "3 X"}
	for _, a := range append(sandboxAttacks, struct {
		name, src string
		want      error
	}{"globals", `obj = nil; _G.string = nil; string = nil; pairs = nil`, nil}) {
		s, err := engine.Compile(a.name, a.src)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = engine.Run(context.Background(), s, obj)
		got, err := engine.Run(context.Background(), honest, obj)
		if err != nil || *got != want {
			t.Fatalf("after %s: got %v, %v; want %v", a.name, got, err, want)
		}
	}
}

func TestLuaEngine_ObjectIsACopy(t *testing.T) {
	engine := NewLuaEngine(DefaultLuaOptions())
	s, err := engine.Compile("mutator", `obj.metadata.name = "changed"; obj.spec = nil; return {status = "Healthy"}`)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "X", "metadata": map[string]any{"name": "orig"}, "spec": map[string]any{"a": 1.0}}}
	if _, err := engine.Run(context.Background(), s, obj); err != nil {
		t.Fatal(err)
	}
	if obj.GetName() != "orig" || obj.Object["spec"] == nil {
		t.Fatalf("script changed the caller's object: %v", obj.Object)
	}
}

func TestLuaEngine_Deterministic(t *testing.T) {
	opts := DefaultLuaOptions()
	opts.Clock = func() time.Time { return time.Unix(1800000000, 0) }
	engine := NewLuaEngine(opts)
	s, err := engine.Compile("det", `
local keys = {}
for k in pairs(obj.status) do table.insert(keys, k) end
return {status = "Healthy", message = table.concat(keys, ",") .. " " .. os.time() .. " " .. os.date("!%Y-%m-%d") .. " " .. math.random(100)}`)
	if err != nil {
		t.Fatal(err)
	}
	obj := object("x/v1", "W", map[string]any{"zeta": 1.0, "alpha": 1.0, "mid": 1.0, "beta": 1.0})
	first, err := engine.Run(context.Background(), s, obj)
	if err != nil {
		t.Fatal(err)
	}
	if first.Message[:20] != "alpha,beta,mid,zeta " {
		t.Fatalf("pairs order not sorted: %q", first.Message)
	}
	for i := 0; i < 20; i++ {
		again, _ := engine.Run(context.Background(), s, obj)
		if *again != *first {
			t.Fatalf("run %d: %q, first %q", i, again.Message, first.Message)
		}
	}
}
