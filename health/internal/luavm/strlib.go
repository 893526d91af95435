package luavm

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// wrapString bounds the string functions that build strings: each charges
// the call's budget before it allocates.
func (s *sandbox) wrapString(strlib *lua.LTable) {
	L := s.L
	b := s.budget
	orig := func(name string) lua.LGFunction { return strlib.RawGetString(name).(*lua.LFunction).GFunction }
	set := func(name string, fn lua.LGFunction) { strlib.RawSetString(name, L.NewFunction(fn)) }

	rep := orig("rep")
	set("rep", func(L *lua.LState) int {
		str := L.CheckString(1)
		n := L.CheckInt64(2)
		if n > 0 {
			size := int64(len(str)) * n
			if len(str) != 0 && size/int64(len(str)) != n {
				size = 1 << 62 // overflow
			}
			b.chargeString(L, size)
		}
		return rep(L)
	})
	format := orig("format")
	set("format", func(L *lua.LState) int {
		f := L.CheckString(1)
		if err := checkFormat(f); err != "" {
			L.RaiseError("bad argument #1 to format: %s", err)
		}
		// The result is at most the format plus every argument at its
		// widest (widths are capped at 99 by checkFormat).
		size := int64(len(f))
		for i := 2; i <= L.GetTop(); i++ {
			size += int64(len(lua.LVAsString(L.Get(i)))) + 128
		}
		b.chargeString(L, size)
		return format(L)
	})
	// The pattern functions run on the sandbox's own bounded matcher.
	set("find", s.strFind)
	set("match", s.strMatch)
	set("gmatch", s.strGmatch)
	set("gsub", s.strGsub)
	for _, name := range []string{"upper", "lower", "reverse"} {
		fn := orig(name)
		set(name, func(L *lua.LState) int {
			b.chargeString(L, int64(len(L.CheckString(1))))
			return fn(L)
		})
	}
	char := orig("char")
	set("char", func(L *lua.LState) int {
		b.chargeString(L, int64(L.GetTop()))
		return char(L)
	})
	strlib.RawSetString("dump", L.NewFunction(func(L *lua.LState) int { s.forbid(L, "string.dump"); return 0 }))
}

// checkFormat rejects string.format directives whose width or precision
// has more than two digits (as C Lua does), which would otherwise let
// "%999999999d" allocate a gigabyte inside a single instruction.
func checkFormat(f string) string {
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		i++
		if i < len(f) && f[i] == '%' {
			continue
		}
		for i < len(f) && strings.IndexByte("-+ #0", f[i]) >= 0 {
			i++
		}
		digits := 0
		for i < len(f) && f[i] >= '0' && f[i] <= '9' {
			i++
			digits++
		}
		if i < len(f) && f[i] == '.' {
			i++
			prec := 0
			for i < len(f) && f[i] >= '0' && f[i] <= '9' {
				i++
				prec++
			}
			if prec > 2 {
				return "invalid format (precision too long)"
			}
		}
		if digits > 2 {
			return "invalid format (width too long)"
		}
		if i < len(f) && f[i] == '*' {
			return "invalid format (* width)"
		}
		// Only C Lua's conversions: Go's %v, %p, %T and friends would print
		// interpreter internals and addresses, which differ between runs.
		if i >= len(f) || strings.IndexByte("diouxXeEfgGcqs", f[i]) < 0 {
			return "invalid conversion in format"
		}
	}
	return ""
}
