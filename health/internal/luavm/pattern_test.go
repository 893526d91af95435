package luavm

import (
	"fmt"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// stock evaluates expr with gopher-lua's own string library, the oracle
// for the sandbox's matcher on inputs small enough for it.
func stock(t testing.TB, expr string) (string, bool) {
	L := lua.NewState()
	defer L.Close()
	if err := L.DoString("return " + expr); err != nil {
		return "", false
	}
	return results(L), true
}

func results(L *lua.LState) string {
	var parts []string
	for i := 1; i <= L.GetTop(); i++ {
		parts = append(parts, fmt.Sprintf("%s:%s", L.Get(i).Type(), lua.LVAsString(L.Get(i))))
	}
	return strings.Join(parts, ",")
}

// sandboxed evaluates expr in the sandbox and formats all its results.
func sandboxed(t testing.TB, vm *VM, expr string) (string, bool) {
	prog, err := vm.Compile("p", "return "+expr)
	if err != nil {
		t.Fatal(err)
	}
	var out string
	ok := true
	err = vm.Run(nilContext(), prog, nil, func(lua.LValue) error { return nil })
	if err != nil {
		ok = false
	}
	// Run once more capturing every result through a table.
	prog2, _ := vm.Compile("p2", "return {n = select('#', "+expr+"), "+expr+"}")
	_ = vm.Run(nilContext(), prog2, nil, func(ret lua.LValue) error {
		tb, isTable := ret.(*lua.LTable)
		if !isTable {
			return nil
		}
		n := int(lua.LVAsNumber(tb.RawGetString("n")))
		var parts []string
		for i := 1; i <= n; i++ {
			v := tb.RawGetInt(i)
			parts = append(parts, fmt.Sprintf("%s:%s", v.Type(), lua.LVAsString(v)))
		}
		out = strings.Join(parts, ",")
		return nil
	})
	return out, ok
}

var patternCases = []string{
	`string.find("hello world", "o w")`,
	`string.find("hello world", "o", 6)`,
	`string.find("hello", "l+")`,
	`string.find("hello", "")`,
	`string.find("hello", "xyz")`,
	`string.find("a.b", ".", 1, true)`,
	`string.find("a+b", "+", 1, true)`,
	`string.find("hello", "^h")`,
	`string.find("hello", "^e")`,
	`string.find("hello", "o$")`,
	`string.find("hello", "(l)(l)")`,
	`string.find("hello", "()ll()")`,
	`string.find("  x", "^%s*")`,
	`string.find("abc", "[a-b]+")`,
	`string.find("abc", "[^a]+")`,
	`string.find("a]b", "[]]")`,
	`string.find("a-b", "[a%-]+")`,
	`string.find("THE (quick) fox", "%((%a+)%)")`,
	`string.find("f(a(b)c)d", "%b()")`,
	`string.find("hello", "l-o")`,
	`string.find("hello", "h?e")`,
	`string.find("xhello", "h?e")`,
	`string.find("abcabc", "(abc)%1")`,
	`string.find("hello", "o", -1)`,
	`string.find("hello", "h", -100)`,
	`string.match("v1.22.3", "^v(%d+)%.(%d+)%.(%d+)$")`,
	`string.match("key=value", "(%w+)=(%w+)")`,
	`string.match("2026-11-29T08:00:00Z", "(%d+)-(%d+)-(%d+)T")`,
	`string.match("hello", ".-(l+)")`,
	`string.match("hello", "()")`,
	`string.match("  trim  ", "^%s*(.-)%s*$")`,
	`string.match("ABC", "%U*")`,
	`string.match("a1_b", "[%w_]+")`,
	`string.match("tab\there", "%c")`,
	`string.match("x.y", "%p")`,
	`string.match("ff0A", "%x+")`,
	`string.gsub("hello world", "o", "0")`,
	`string.gsub("hello world", "(o)", "[%1]")`,
	`string.gsub("hello", "", "-")`,
	`string.gsub("abc", "%w", "%0%0")`,
	`string.gsub("abc", "b*", "X")`,
	`string.gsub("hello world", "%w+", "<%0>", 1)`,
	`string.gsub("hello", "^h", "H")`,
	`string.gsub("hello", "l", {l = "L"})`,
	`string.gsub("hello", "(h)(e)", function(a, b) return b .. a end)`,
	`string.gsub("hello", "l", function() return nil end)`,
	`string.gsub("hello", "l", false and 1 or {})`,
	`string.gsub("50%", "%%", "%%%%")`,
	`string.gsub("a b", "()", "%1")`,
}

// luaSemantics are cases where gopher-lua's own library departs from Lua
// 5.1 and the sandbox follows Lua 5.1.
var luaSemantics = map[string]string{
	// init past the end is clamped to the end (Lua 5.1 str_find_aux).
	`string.find("hello", "", 10)`: "number:6,number:5",
	// %f: the position before the subject counts as '\0'.
	`string.find("THE (quick) fox", "%f[%a]%a+")`: "number:1,number:3",
	// a failed match returns one nil.
	`string.match("abc", "%u")`: "nil:",
}

func TestPattern_Lua51Semantics(t *testing.T) {
	vm := New(DefaultOptions())
	for expr, want := range luaSemantics {
		if got, ok := sandboxed(t, vm, expr); !ok || got != want {
			t.Errorf("%s: got %q (ok %v), want %q", expr, got, ok, want)
		}
	}
	// A replacement value that is neither a string, a number, nil nor false
	// is an error.
	e := expectKind(t, vm, `return string.gsub("abc", ".", {a = 1, b = true})`, ErrRuntime)
	if !strings.Contains(e.Detail, "invalid replacement value (a boolean)") {
		t.Fatalf("detail %q", e.Detail)
	}
}

// TestPattern_MatchesGopherLua compares the sandbox's pattern functions
// with gopher-lua's on ordinary inputs.
func TestPattern_MatchesGopherLua(t *testing.T) {
	vm := New(DefaultOptions())
	for _, expr := range patternCases {
		want, wantOK := stock(t, expr)
		got, gotOK := sandboxed(t, vm, expr)
		if want != got || wantOK != gotOK {
			t.Errorf("%s:\n sandbox %q (ok %v)\n stock   %q (ok %v)", expr, got, gotOK, want, wantOK)
		}
	}
	// gmatch, through a loop.
	loop := `(function() local t = {} for k, v in string.gmatch("a=1, b=2, c=3", "(%w+)=(%w+)") do t[#t+1] = k .. v end return table.concat(t, ";") end)()`
	want, _ := stock(t, loop)
	got, _ := sandboxed(t, vm, loop)
	if want != got {
		t.Errorf("gmatch: sandbox %q, stock %q", got, want)
	}
}

func TestPattern_Errors(t *testing.T) {
	vm := New(DefaultOptions())
	for pat, msg := range map[string]string{
		"%":   "ends with '%'",
		"[a":  "missing ']'",
		"(a":  "unfinished capture",
		"a)":  "invalid pattern capture",
		"%1":  "invalid capture index",
		"%b":  "missing arguments to '%b'",
		"%fa": "missing '['",
		strings.Repeat("(", 33) + "a" + strings.Repeat(")", 33): "too many captures",
	} {
		t.Run(pat, func(t *testing.T) {
			e := expectKind(t, vm, `return string.match("aaa", "`+pat+`")`, ErrRuntime)
			if !strings.Contains(e.Detail, msg) {
				t.Errorf("pattern %q: detail %q lacks %q", pat, e.Detail, msg)
			}
		})
	}
}

// TestSandbox_PatternBacktrackingBomb is a pattern that takes gopher-lua's
// own matcher over a minute on a 400-byte subject: here every matching
// step is charged to the instruction budget.
func TestSandbox_PatternBacktrackingBomb(t *testing.T) {
	vm := New(DefaultOptions())
	for _, src := range []string{
		`return string.find(string.rep("a", 100000), ".-.-.-.-b")`,
		`return string.match(string.rep("a", 100000), "(a*)*b")`,
		`return string.gsub(string.rep("a", 100000), ".-.-.-b", "")`,
		`for x in string.gmatch(string.rep("a", 100000), ".-.-.-b") do end`,
	} {
		start := time.Now()
		expectKind(t, vm, src, ErrInstructionLimit)
		if d := time.Since(start); d > time.Second*slowdown {
			t.Errorf("%s took %v", src, d)
		}
	}
}
