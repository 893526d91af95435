package luavm

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The string functions that take patterns, on the bounded matcher of
// pattern.go: find, match, gmatch and gsub, with Lua 5.1's semantics.

func (s *sandbox) newMatcher(src, pat string) *matcher {
	return &matcher{src: src, pat: pat, b: s.budget}
}

// raise turns a matcher error into a Lua error; a budget stop keeps its
// own kind (the budget already recorded it).
func (s *sandbox) raise(L *lua.LState, err *patternError) {
	L.RaiseError("%s", err.msg)
}

func pushCapture(L *lua.LState, v captureValue) {
	if v.position {
		L.Push(lua.LNumber(v.pos))
		return
	}
	L.Push(lua.LString(v.str))
}

// startIndex converts Lua's 1-based, possibly negative init to an offset,
// clamped to [0, len] as Lua 5.1 does.
func startIndex(init, n int) int {
	if init < 0 {
		init = n + init + 1
	}
	init--
	if init < 0 {
		init = 0
	}
	if init > n {
		init = n
	}
	return init
}

func (s *sandbox) strFind(L *lua.LState) int  { return s.findAux(L, true) }
func (s *sandbox) strMatch(L *lua.LState) int { return s.findAux(L, false) }

func (s *sandbox) findAux(L *lua.LState, find bool) int {
	src := L.CheckString(1)
	pat := L.CheckString(2)
	init := startIndex(L.OptInt(3, 1), len(src))
	if find && (L.ToBool(4) || !hasSpecials(pat)) {
		if i := strings.Index(src[init:], pat); i >= 0 {
			L.Push(lua.LNumber(init + i + 1))
			L.Push(lua.LNumber(init + i + len(pat)))
			return 2
		}
		L.Push(lua.LNil)
		return 1
	}
	m := s.newMatcher(src, pat)
	p := 0
	anchor := len(pat) > 0 && pat[0] == '^'
	if anchor {
		p = 1
	}
	for start := init; start <= len(src); start++ {
		m.level, m.depth = 0, 0
		e := m.match(start, p)
		if m.err != nil {
			s.raise(L, m.err)
		}
		if e != -1 {
			caps, err := m.captures(start, e, !find)
			if err != nil {
				s.raise(L, err)
			}
			n := 0
			if find {
				L.Push(lua.LNumber(start + 1))
				L.Push(lua.LNumber(e))
				n = 2
			}
			for _, c := range caps {
				pushCapture(L, c)
			}
			return n + len(caps)
		}
		if anchor {
			break
		}
	}
	L.Push(lua.LNil)
	return 1
}

func (s *sandbox) strGmatch(L *lua.LState) int {
	src := L.CheckString(1)
	pat := L.CheckString(2)
	pos := 0
	L.Push(L.NewFunction(func(L *lua.LState) int {
		m := s.newMatcher(src, pat)
		for ; pos <= len(src); pos++ {
			m.level, m.depth = 0, 0
			e := m.match(pos, 0)
			if m.err != nil {
				s.raise(L, m.err)
			}
			if e == -1 {
				continue
			}
			start := pos
			pos = e
			if e == start {
				pos++ // an empty match: move on
			}
			caps, err := m.captures(start, e, true)
			if err != nil {
				s.raise(L, err)
			}
			for _, c := range caps {
				pushCapture(L, c)
			}
			return len(caps)
		}
		return 0
	}))
	return 1
}

func (s *sandbox) strGsub(L *lua.LState) int {
	src := L.CheckString(1)
	pat := L.CheckString(2)
	repl := L.Get(3)
	switch repl.(type) {
	case lua.LString, lua.LNumber, *lua.LTable, *lua.LFunction:
	default:
		L.ArgError(3, "string/function/table expected")
	}
	maxN := L.OptInt(4, len(src)+1)
	s.materialize(L, repl)
	anchor := len(pat) > 0 && pat[0] == '^'
	p := 0
	if anchor {
		p = 1
	}
	m := s.newMatcher(src, pat)
	var out strings.Builder
	add := func(piece string) {
		s.budget.chargeString(L, int64(len(piece)))
		if out.Len()+len(piece) > s.budget.limits.MaxStringBytes {
			s.budget.chargeString(L, int64(s.budget.limits.MaxStringBytes)+1)
		}
		out.WriteString(piece)
	}
	pos, count := 0, 0
	for count < maxN {
		m.level, m.depth = 0, 0
		e := m.match(pos, p)
		if m.err != nil {
			s.raise(L, m.err)
		}
		if e != -1 {
			count++
			s.gsubValue(L, m, pos, e, repl, add)
		}
		switch {
		case e != -1 && e > pos:
			pos = e
		case pos < len(src):
			add(src[pos : pos+1])
			pos++
		default:
			pos = len(src) + 1
		}
		if pos > len(src) || anchor {
			break
		}
	}
	if pos < len(src) {
		add(src[pos:])
	}
	L.Push(lua.LString(out.String()))
	L.Push(lua.LNumber(count))
	return 2
}

// gsubValue appends the replacement of the match src[s:e].
func (s *sandbox) gsubValue(L *lua.LState, m *matcher, start, e int, repl lua.LValue, add func(string)) {
	whole := m.src[start:e]
	switch r := repl.(type) {
	case lua.LString, lua.LNumber:
		text := lua.LVAsString(r)
		for i := 0; i < len(text); i++ {
			c := text[i]
			if c != '%' || i+1 == len(text) {
				add(text[i : i+1])
				continue
			}
			i++
			d := text[i]
			switch {
			case d == '0':
				add(whole)
			case isdigit(d):
				v, err := m.captureAt(int(d-'1'), start, e)
				if err != nil {
					s.raise(L, err)
				}
				if v.position {
					add(lua.LNumber(v.pos).String())
				} else {
					add(v.str)
				}
			default:
				add(text[i : i+1])
			}
		}
		return
	}
	caps, err := m.captures(start, e, true)
	if err != nil {
		s.raise(L, err)
	}
	var value lua.LValue
	switch r := repl.(type) {
	case *lua.LTable:
		key := lua.LValue(lua.LString(caps[0].str))
		if caps[0].position {
			key = lua.LNumber(caps[0].pos)
		}
		value = L.GetTable(r, key)
	case *lua.LFunction:
		top := L.GetTop()
		L.Push(r)
		for _, c := range caps {
			pushCapture(L, c)
		}
		L.Call(len(caps), 1)
		value = L.Get(-1)
		L.SetTop(top)
	}
	switch v := value.(type) {
	case lua.LString, lua.LNumber:
		add(lua.LVAsString(v))
	default:
		if value == lua.LNil || value == lua.LFalse {
			add(whole) // keep the original text
			return
		}
		L.RaiseError("invalid replacement value (a %s)", value.Type().String())
	}
}
