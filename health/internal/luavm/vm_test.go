package luavm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// run compiles and runs src and returns the first result as a string.
func run(t *testing.T, vm *VM, src string, obj map[string]any) (string, error) {
	t.Helper()
	prog, err := vm.Compile("test.lua", src)
	if err != nil {
		return "", err
	}
	var out string
	err = vm.Run(context.Background(), prog, obj, func(ret lua.LValue) error {
		out = lua.LVAsString(ret)
		if ret == lua.LNil {
			out = "nil"
		}
		return nil
	})
	return out, err
}

func TestRun_ReturnsValueAndReadsObj(t *testing.T) {
	vm := New(DefaultOptions())
	out, err := run(t, vm, `return obj.metadata.name .. "-" .. #obj.spec.items`, map[string]any{
		"metadata": map[string]any{"name": "web"},
		"spec":     map[string]any{"items": []any{int64(1), int64(2)}},
	})
	if err != nil || out != "web-2" {
		t.Fatalf("got %q, %v", out, err)
	}
}

func TestRun_LuaSemanticsSurviveRewrite(t *testing.T) {
	vm := New(DefaultOptions())
	cases := map[string]struct{ src, want string }{
		"multiple assignment evaluates keys first": {`local a = {} local i = 3; i, a[i] = i+1, 20; return tostring(a[3]) .. tostring(a[4])`, "20nil"},
		"swap":                      {`local t = {1, 2}; t[1], t[2] = t[2], t[1]; return t[1] .. t[2]`, "21"},
		"function in table":         {`local m = {} function m.f(x) return x * 2 end return m.f(21)`, "42"},
		"method definition":         {`local o = {v = 5} function o:get() return self.v end return o:get()`, "5"},
		"concat metamethod":         {`local t = setmetatable({}, {__concat = function(a, b) return "meta" end}) return t .. "x"`, "meta"},
		"newindex metamethod":       {`local log = "" local t = setmetatable({}, {__newindex = function(t, k, v) log = log .. k end}) t.a = 1 t.b = 2 return log`, "ab"},
		"string methods":            {`local s = "Hello" return s:lower() .. s:upper() .. s:rep(2, "")`, "helloHELLOHelloHello"},
		"string.match available":    {`return string.match("v1.2.3", "(%d+)%.(%d+)")`, "1"},
		"format":                    {`return string.format("%s=%5.2f", "x", 3.14159)`, "x= 3.14"},
		"gsub function":             {`return (string.gsub("abc", "%w", function(c) return c:upper() end))`, "ABC"},
		"table.concat":              {`return table.concat({"a", "b", "c"}, ",")`, "a,b,c"},
		"pairs order is sorted":     {`local s = "" for k in pairs(obj) do s = s .. k end return s`, "abcdef"},
		"math.random is repeatable": {`return math.random(1000) .. "," .. math.random(1000)`, "742,197"},
		"os.time reads the clock":   {`return os.time()`, "1700000000"},
		"os.date formats utc":       {`return os.date("!%Y-%m-%dT%H:%M:%SZ", 0)`, "1970-01-01T00:00:00Z"},
		// As gopher-lua (Argo CD's interpreter): numeric strings in the
		// date table (scripts pass string.match captures), and defaults for
		// missing fields.
		"os.time numeric strings":  {`return os.time({year="2023", month="11", day=" 014", hour="22", min="13", sec="20"})`, "1700000000"},
		"os.time hex string":       {`return os.time({year=2023, month="0xB", day=14, hour=22, min=13, sec=20})`, "1700000000"},
		"os.time default fields":   {`return os.time({year=1970, month=1, day=1})`, "43200"},
		"os.time unreadable field": {`return os.time({year="x", month=1, day=1, hour=0})`, "-2208988800"},
		"pcall catches errors":     {`local ok, err = pcall(function() error("boom") end) return tostring(ok)`, "false"},
	}
	opts := DefaultOptions()
	opts.Clock = func() time.Time { return time.Unix(1700000000, 0) }
	vm = New(opts)
	obj := map[string]any{"f": 1.0, "e": 1.0, "d": 1.0, "c": 1.0, "b": 1.0, "a": 1.0}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := run(t, vm, c.src, obj)
			if err != nil {
				t.Fatal(err)
			}
			if c.want == "742,197" {
				// Deterministic, whatever the numbers: run again and compare.
				again, _ := run(t, vm, c.src, obj)
				if again != got {
					t.Fatalf("math.random not repeatable: %q then %q", got, again)
				}
				return
			}
			if got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

// expectKind runs src and requires a typed error of kind within the limit.
//
// Bombs must be stopped by their own limit, not by the clock: the time limit
// of vm is raised to a minute when it is the default, and the call must
// still end within the default 1 s (scaled under the race detector).
func expectKind(t *testing.T, vm *VM, src string, kind error) *Error {
	t.Helper()
	limit := vm.Limits().Timeout
	if kind != ErrTimeout && limit == DefaultLimits().Timeout {
		opts := DefaultOptions()
		opts.Limits = vm.Limits()
		opts.Limits.Timeout = time.Minute
		vm = New(opts)
	}
	start := time.Now()
	_, err := run(t, vm, src, map[string]any{"kind": "X"})
	elapsed := time.Since(start)
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, kind) {
		t.Fatalf("want %v, got %v", kind, err)
	}
	if elapsed > limit*slowdown+200*time.Millisecond {
		t.Fatalf("took %v, over the %v limit", elapsed, limit)
	}
	if e.Script != "test.lua" {
		t.Fatalf("error does not name the script: %v", err)
	}
	return e
}

func TestSandbox_Escapes(t *testing.T) {
	vm := New(DefaultOptions())
	cases := map[string]string{
		"os.execute":            `os.execute("id")`,
		"os.exit":               `os.exit(1)`,
		"os.getenv":             `return os.getenv("HOME")`,
		"os.remove":             `os.remove("/tmp/x")`,
		"io.open":               `local f = io.open("/etc/passwd") return f:read("*a")`,
		"io.popen":              `io.popen("id")`,
		"dofile":                `dofile("/etc/passwd")`,
		"loadfile":              `loadfile("/etc/passwd")`,
		"load":                  `load(function() return nil end)`,
		"loadstring":            `loadstring("return 1")()`,
		"require":               `require("os")`,
		"module":                `module("x")`,
		"debug":                 `debug.getregistry()`,
		"coroutine":             `coroutine.create(function() end)`,
		"package.loadlib":       `package.loadlib("/lib/libc.so.6", "system")`,
		"setfenv":               `setfenv(1, {})`,
		"string.dump":           `string.dump(function() end)`,
		"string lib write":      `string.rep = nil`,
		"string lib rawset":     `rawset(string, "rep", nil)`,
		"table.insert lib":      `table.insert(string, 1)`,
		"string metatable":      `setmetatable(string, {})`,
		"function def into lib": `function string.upper(s) return s end`,
		"collectgarbage":        `collectgarbage()`,
		"print":                 `print("x")`,
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) { expectKind(t, vm, src, ErrForbidden) })
	}
}

func TestSandbox_StringMetatableHidden(t *testing.T) {
	vm := New(DefaultOptions())
	out, err := run(t, vm, `return tostring(getmetatable(""))`, nil)
	if err != nil || out != "false" {
		t.Fatalf("getmetatable(\"\") = %q, %v; want false", out, err)
	}
	out, err = run(t, vm, `return tostring(getmetatable(_G))`, nil)
	if err != nil || out != "false" {
		t.Fatalf("getmetatable(_G) = %q, %v; want false", out, err)
	}
}

func TestSandbox_InfiniteLoopStopsOnInstructionLimit(t *testing.T) {
	expectKind(t, New(DefaultOptions()), `while true do end`, ErrInstructionLimit)
}

func TestSandbox_InfiniteLoopStopsOnTimeout(t *testing.T) {
	opts := DefaultOptions()
	opts.Limits.MaxInstructions = 1 << 62
	opts.Limits.Timeout = 100 * time.Millisecond
	expectKind(t, New(opts), `while true do end`, ErrTimeout)
}

func TestSandbox_CallerCancel(t *testing.T) {
	vm := New(DefaultOptions())
	prog, err := vm.Compile("test.lua", `while true do end`)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = vm.Run(ctx, prog, nil, func(lua.LValue) error { return nil })
	if !errors.Is(err, ErrCanceled) {
		t.Fatalf("want ErrCanceled, got %v", err)
	}
}

func TestSandbox_StringRepBomb(t *testing.T) {
	expectKind(t, New(DefaultOptions()), `local s = string.rep("x", 1e12) return #s`, ErrMemoryLimit)
}

func TestSandbox_StringRepMethodBomb(t *testing.T) {
	expectKind(t, New(DefaultOptions()), `local s = ("x"):rep(2^40) return #s`, ErrMemoryLimit)
}

func TestSandbox_ConcatDoublingBomb(t *testing.T) {
	expectKind(t, New(DefaultOptions()), `local s = "x" for i = 1, 64 do s = s .. s end return #s`, ErrMemoryLimit)
}

func TestSandbox_ConcatAccumulationBomb(t *testing.T) {
	// Many strings under the per-string cap still exhaust the call budget.
	expectKind(t, New(DefaultOptions()), `local t = {} local s = string.rep("x", 500000) for i = 1, 1000 do t[i] = s .. i end`, ErrMemoryLimit)
}

func TestSandbox_FormatWidthBomb(t *testing.T) {
	e := expectKind(t, New(DefaultOptions()), `return string.format("%999999999d", 1)`, ErrRuntime)
	if !strings.Contains(e.Detail, "width too long") {
		t.Fatalf("detail %q", e.Detail)
	}
}

func TestSandbox_GsubBomb(t *testing.T) {
	expectKind(t, New(DefaultOptions()), `local s = string.rep("x", 100000) return string.gsub(s, "x", string.rep("y", 1000))`, ErrMemoryLimit)
}

func TestSandbox_TableConcatBomb(t *testing.T) {
	expectKind(t, New(DefaultOptions()), `local s = string.rep("x", 900000) return table.concat({s, s, s})`, ErrMemoryLimit)
}

func TestSandbox_TableGrowthLoop(t *testing.T) {
	expectKind(t, New(DefaultOptions()), `local t = {} while true do t[#t+1] = 1 end`, ErrMemoryLimit)
}

func TestSandbox_TableInsertLoop(t *testing.T) {
	expectKind(t, New(DefaultOptions()), `local t = {} while true do table.insert(t, "x") end`, ErrMemoryLimit)
}

func TestSandbox_RawsetGrowthLoop(t *testing.T) {
	expectKind(t, New(DefaultOptions()), `local t = {} local i = 0 while true do i = i + 1 rawset(t, i, i) end`, ErrMemoryLimit)
}

func TestSandbox_KeyChurnLoop(t *testing.T) {
	// gopher-lua never forgets a key once inserted, so set-then-clear of new
	// keys grows memory too; every new key is charged.
	expectKind(t, New(DefaultOptions()), `local t = {} local i = 0 while true do i = i + 1 t[i] = 1 t[i] = nil end`, ErrMemoryLimit)
}

func TestSandbox_DeepRecursion(t *testing.T) {
	expectKind(t, New(DefaultOptions()), `local function f(n) return 1 + f(n + 1) end return f(1)`, ErrStackOverflow)
}

func TestSandbox_UnpackBomb(t *testing.T) {
	expectKind(t, New(DefaultOptions()), `return unpack({}, 1, 1e8)`, ErrStackOverflow)
}

func TestSandbox_NoStateLeaksBetweenCalls(t *testing.T) {
	vm := New(DefaultOptions())
	obj := map[string]any{"spec": map[string]any{"replicas": 1.0}}
	first, err := run(t, vm, `leaked = "yes"; obj.spec.replicas = 99; setmetatable(obj, {__index = function() return "meta" end}); return "done"`, obj)
	if err != nil || first != "done" {
		t.Fatal(first, err)
	}
	for i := 0; i < 4; i++ { // several calls, so a pooled state is reused
		out, err := run(t, vm, `return tostring(leaked) .. "," .. obj.spec.replicas .. "," .. tostring(obj.missing) .. "," .. tostring(getmetatable(obj))`, obj)
		if err != nil || out != "nil,1,nil,nil" {
			t.Fatalf("state leaked into call %d: %q %v", i, out, err)
		}
	}
	if obj["spec"].(map[string]any)["replicas"] != 1.0 {
		t.Fatal("script changed the Go object")
	}
}

func TestSandbox_SyntaxErrorIsTyped(t *testing.T) {
	_, err := New(DefaultOptions()).Compile("bad.lua", `return (`)
	if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "bad.lua") {
		t.Fatalf("got %v", err)
	}
}

func TestCompile_Cached(t *testing.T) {
	vm := New(DefaultOptions())
	a, err := vm.Compile("a", `return 1`)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := vm.Compile("a", `return 1`)
	if a != b {
		t.Fatal("same source compiled twice")
	}
}

func TestSandbox_NoAddressesLeak(t *testing.T) {
	vm := New(DefaultOptions())
	out, err := run(t, vm, `local a, b = {}, {} return tostring(a) .. " " .. tostring(b) .. " " .. tostring(a) .. " " .. tostring(print)`, nil)
	if err != nil || out != "table: 1 table: 2 table: 1 function: 3" {
		t.Fatalf("got %q, %v", out, err)
	}
	for _, f := range []string{"%p", "%v", "%T", "%#v"} {
		expectKind(t, vm, `return string.format("`+f+`", {})`, ErrRuntime)
	}
	e := expectKind(t, vm, `error({})`, ErrRuntime)
	if e.Detail != "error object of type table" {
		t.Fatalf("detail %q", e.Detail)
	}
}

// TestLazyObject_Indistinguishable checks that the lazily converted object
// behaves like an eagerly built table under every operation that bypasses
// __index.
func TestLazyObject_Indistinguishable(t *testing.T) {
	vm := New(DefaultOptions())
	obj := map[string]any{
		"metadata": map[string]any{"name": "web", "labels": map[string]any{"b": "2", "a": "1"}},
		"spec":     map[string]any{"items": []any{map[string]any{"n": "x"}, map[string]any{"n": "y"}}, "flag": true},
		"status":   map[string]any{"health": map[string]any{"status": "Healthy", "message": "ok"}},
	}
	cases := map[string]struct{ src, want string }{
		"pairs nested":            {`local s = "" for k, v in pairs(obj.metadata.labels) do s = s .. k .. v end return s`, "a1b2"},
		"next":                    {`local k, v = next(obj.metadata.labels) return k .. v`, "a1"},
		"next empty after fill":   {`return tostring(next(obj.metadata.labels, "b"))`, "nil"},
		"rawget":                  {`return rawget(obj.metadata, "name")`, "web"},
		"getmetatable":            {`return tostring(getmetatable(obj.spec))`, "nil"},
		"setmetatable keeps data": {`setmetatable(obj.spec, {__index = function() return "meta" end}) return tostring(obj.spec.flag) .. obj.spec.other`, "truemeta"},
		"rawset then read":        {`rawset(obj.metadata, "extra", 1) return obj.metadata.name .. obj.metadata.extra`, "web1"},
		"assign then pairs":       {`obj.metadata.labels.c = "3" local n = 0 for _ in pairs(obj.metadata.labels) do n = n + 1 end return n`, "3"},
		"array length":            {`return #obj.spec.items .. obj.spec.items[2].n`, "2y"},
		"ipairs of array":         {`local s = "" for i, it in ipairs(obj.spec.items) do s = s .. i .. it.n end return s`, "1x2y"},
		"table.insert on stub":    {`table.insert(obj.metadata.labels, "z") return obj.metadata.labels[1] .. obj.metadata.labels.a`, "z1"},
		"gsub table repl":         {`return (string.gsub("a-b", "%a", obj.metadata.labels))`, "1-2"},
		"unpack stub":             {`return select("#", unpack(obj.metadata.labels))`, "0"},
		"missing field":           {`return tostring(obj.spec.nothing)`, "nil"},
		"nil object fields":       {`return tostring(obj.nope) .. tostring(obj.status.health.nope)`, "nilnil"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := run(t, vm, c.src, obj)
			if err != nil || got != c.want {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
	// A stub returned as the result is filled in before the caller reads it.
	prog, err := vm.Compile("ret", `return obj.status.health`)
	if err != nil {
		t.Fatal(err)
	}
	var status string
	err = vm.Run(context.Background(), prog, obj, func(ret lua.LValue) error {
		status = lua.LVAsString(ret.(*lua.LTable).RawGetString("status"))
		return nil
	})
	if err != nil || status != "Healthy" {
		t.Fatalf("returned stub read as %q, %v", status, err)
	}
}

func TestLazyObject_DeepNestingRefused(t *testing.T) {
	deep := map[string]any{}
	cur := deep
	for i := 0; i < 150; i++ {
		next := map[string]any{}
		cur["a"] = next
		cur = next
	}
	vm := New(DefaultOptions())
	_, err := run(t, vm, `local o = obj while o.a ~= nil do o = o.a end return "end"`, deep)
	if !errors.Is(err, ErrRuntime) || !strings.Contains(err.Error(), "nested deeper") {
		t.Fatalf("got %v", err)
	}
}

func TestSandbox_RecursionThroughGoFunctions(t *testing.T) {
	vm := New(DefaultOptions())
	for name, src := range map[string]string{
		"__index":  `local t = setmetatable({}, {__index = function(t, k) return t[k] end}) return t.x`,
		"gsub":     `local function f(s) return (string.gsub(s, ".", f)) end return f("ab")`,
		"sort":     `local function f() table.sort({3, 2, 1}, function(a, b) f() return a < b end) end f()`,
		"tostring": `local t = setmetatable({}, {__tostring = function(t) return tostring(t) end}) return tostring(t)`,
	} {
		t.Run(name, func(t *testing.T) { expectKind(t, vm, src, ErrStackOverflow) })
	}
	// pcall may catch a stack overflow, as in C Lua: the script then
	// unwinds normally.
	if out, err := run(t, vm, `local function f() return pcall(f) end return tostring(f())`, nil); err != nil || (out != "true" && out != "false") {
		t.Fatalf("pcall recursion: %q, %v", out, err)
	}
}

func nilContext() context.Context { return context.Background() }

func TestSandbox_TableChainLoop(t *testing.T) {
	expectKind(t, New(DefaultOptions()), `local t = nil while true do t = {t} end`, ErrMemoryLimit)
}

func TestSandbox_ClosureChainLoop(t *testing.T) {
	expectKind(t, New(DefaultOptions()), `local f = nil while true do local g = f f = function() return g end end`, ErrMemoryLimit)
}

func TestSandbox_FunctionStatementChainLoop(t *testing.T) {
	expectKind(t, New(DefaultOptions()), `local f while true do local g = f function f() return g end end`, ErrMemoryLimit)
}
