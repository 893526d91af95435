package luavm

import (
	"context"
	"errors"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// FuzzPattern runs the sandbox's pattern functions on arbitrary subjects
// and patterns: they must never panic, must stop within the budget, and
// must fail only with a typed *Error.
func FuzzPattern(f *testing.F) {
	for _, seed := range [][2]string{
		{"hello world", "(%w+) (%w+)"}, {"f(a(b)c)d", "%b()"}, {"THE (quick) fox", "%f[%a]%a+"},
		{"abcabc", "(abc)%1"}, {"a]b", "[]]"}, {"  x  ", "^%s*(.-)%s*$"}, {"aaaa", ".-.-b"},
		{"x", "%"}, {"x", "[a"}, {"x", "(()"}, {"50%", "%%"}, {"", ""},
	} {
		f.Add(seed[0], seed[1])
	}
	opts := DefaultOptions()
	opts.Limits.MaxInstructions = 100_000
	vm := New(opts)
	prog, err := vm.Compile("fuzz", `
local a = {string.find(obj.s, obj.p)}
local b = {string.match(obj.s, obj.p)}
local c, n = string.gsub(obj.s, obj.p, "<%0>")
local k = 0
for x in string.gmatch(obj.s, obj.p) do k = k + 1 if k > 100 then break end end
return #a + #b + n + k`)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s, p string) {
		err := vm.Run(context.Background(), prog, map[string]any{"s": s, "p": p}, func(lua.LValue) error { return nil })
		var e *Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("untyped error %v", err)
		}
	})
}
