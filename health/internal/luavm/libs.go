package luavm

import (
	"strconv"

	lua "github.com/yuin/gopher-lua"
)

// forbiddenGlobals are base-library functions a script must not reach:
// they read files, compile code at run time, change other functions'
// environments, or write to the process's output.
var forbiddenGlobals = [...]string{
	"dofile", "loadfile", "load", "loadstring", "require", "module",
	"setfenv", "getfenv", "collectgarbage", "print", "_printregs", "newproxy",
}

// forbiddenLibraries are whole libraries the sandbox does not offer. Each is
// replaced by a table that raises ErrForbidden on any use, so a script that
// calls io.open learns why it failed.
var forbiddenLibraries = [...]string{"io", "debug", "coroutine", "package", "channel"}

// sandbox is one pooled interpreter with its base environment.
type sandbox struct {
	L         *lua.LState
	budget    *budget
	envMeta   *lua.LTable
	protected map[*lua.LTable]struct{}
	rng       uint64
	clock     Clock
	ids       map[lua.LValue]int // see identity; reset per call
	lazyMeta  *lua.LTable
	pending   map[*lua.LTable]lazyEntry // stubs not yet filled in; see lazy.go
}

func (s *sandbox) forbid(L *lua.LState, what string) {
	s.budget.stop(ErrForbidden, what)
	L.RaiseError("%s: %s", what, ErrForbidden.Error())
}

func (s *sandbox) isProtected(v lua.LValue) bool {
	t, ok := v.(*lua.LTable)
	if !ok {
		return false
	}
	_, p := s.protected[t]
	return p
}

// newSandbox builds a state with the safe libraries.
func newSandbox(l Limits, clock Clock, requireOS bool) *sandbox {
	L := lua.NewState(lua.Options{
		SkipOpenLibs:        true,
		CallStackSize:       l.CallStackSize,
		RegistrySize:        1024,
		RegistryMaxSize:     l.RegistryMaxSize,
		MinimizeStackMemory: true,
	})
	s := &sandbox{L: L, budget: newBudget(l), protected: map[*lua.LTable]struct{}{}, clock: clock, pending: map[*lua.LTable]lazyEntry{}}
	s.lazyMeta = s.newLazyMeta()
	for _, open := range []lua.LGFunction{lua.OpenBase, lua.OpenTable, lua.OpenString, lua.OpenMath} {
		L.Push(L.NewFunction(open))
		L.Call(0, 0)
	}
	g := L.G.Global
	for _, name := range forbiddenGlobals {
		name := name
		g.RawSetString(name, L.NewFunction(func(L *lua.LState) int { s.forbid(L, name); return 0 }))
	}
	for _, name := range forbiddenLibraries {
		g.RawSetString(name, s.forbiddenLibrary(name))
	}
	g.RawSetString(hiddenConcat, L.NewFunction(s.concat))
	g.RawSetString(hiddenStore, L.NewFunction(s.store))
	g.RawSetString(hiddenNew, L.NewFunction(s.newValue))
	s.wrapBase(g)
	strlib := g.RawGetString("string").(*lua.LTable)
	s.wrapString(strlib)
	tablib := g.RawGetString("table").(*lua.LTable)
	s.wrapTable(tablib)
	mathlib := g.RawGetString("math").(*lua.LTable)
	mathlib.RawSetString("random", L.NewFunction(s.random))
	mathlib.RawSetString("randomseed", L.NewFunction(s.randomseed))
	oslib := s.osLibrary()
	g.RawSetString("os", oslib)
	if requireOS {
		g.RawSetString("require", L.NewFunction(func(L *lua.LState) int {
			if L.CheckString(1) != "os" {
				s.forbid(L, "require of "+L.CheckString(1))
			}
			L.Push(oslib)
			return 1
		}))
	}

	// The string metatable is shared by every string: hide it.
	strMeta := L.GetMetatable(lua.LString("")).(*lua.LTable)
	strMeta.RawSetString("__metatable", lua.LFalse)

	s.envMeta = L.NewTable()
	s.envMeta.RawSetString("__index", g)
	s.envMeta.RawSetString("__metatable", lua.LFalse)
	s.fillStubsFirst(g, tablib)
	for _, t := range []*lua.LTable{g, strlib, tablib, mathlib, oslib, strMeta, s.envMeta, s.lazyMeta} {
		s.protected[t] = struct{}{}
	}
	return s
}

func (s *sandbox) forbiddenLibrary(name string) *lua.LTable {
	L := s.L
	t := L.NewTable()
	meta := L.NewTable()
	deny := L.NewFunction(func(L *lua.LState) int { s.forbid(L, "the "+name+" library"); return 0 })
	meta.RawSetString("__index", deny)
	meta.RawSetString("__newindex", deny)
	meta.RawSetString("__call", deny)
	meta.RawSetString("__metatable", lua.LFalse)
	t.Metatable = meta
	s.protected[t] = struct{}{}
	s.protected[meta] = struct{}{}
	return t
}

// identity names a table or function for tostring without its address,
// which would differ between runs: "table: 1" is the first table printed in
// this call, "table: 2" the second, and so on.
func (s *sandbox) identity(v lua.LValue) string {
	if s.ids == nil {
		s.ids = map[lua.LValue]int{}
	}
	n, ok := s.ids[v]
	if !ok {
		n = len(s.ids) + 1
		s.ids[v] = n
	}
	return v.Type().String() + ": " + strconv.Itoa(n)
}

// fillStubsFirst wraps the functions that look at a table without its
// metatable, so that they fill an object stub in first (see lazy.go). It
// runs after the other wrappers, so it wraps them too.
func (s *sandbox) fillStubsFirst(g, tablib *lua.LTable) {
	wrap := func(t *lua.LTable, name string, n int) {
		fn := t.RawGetString(name).(*lua.LFunction)
		if len(fn.Upvalues) == 0 {
			t.RawSetString(name, s.L.NewFunction(func(L *lua.LState) int {
				s.materializeArgs(L, n)
				return fn.GFunction(L)
			}))
			return
		}
		// A closure (pairs, ipairs) reads its own upvalues: call it as
		// itself rather than borrowing its Go body.
		t.RawSetString(name, s.L.NewFunction(func(L *lua.LState) int {
			s.materializeArgs(L, n)
			top := L.GetTop()
			L.Push(fn)
			for i := 1; i <= top; i++ {
				L.Push(L.Get(i))
			}
			L.Call(top, lua.MultRet)
			return L.GetTop() - top
		}))
	}
	for _, name := range []string{"next", "rawget", "rawset", "getmetatable", "setmetatable", "unpack"} {
		wrap(g, name, 1)
	}
	for _, name := range []string{"insert", "remove", "sort", "concat", "maxn", "getn"} {
		if tablib.RawGetString(name) != lua.LNil {
			wrap(tablib, name, 1)
		}
	}
	// pairs and ipairs return the iterator and the table: fill it in and
	// let the original do the rest (pairs returns next, wrapped above).
	wrap(g, "pairs", 1)
	wrap(g, "ipairs", 1)
}

// concat is the bounded replacement of the .. operator.
func (s *sandbox) concat(L *lua.LState) int {
	a, b := L.Get(1), L.Get(2)
	if stringish(a) && stringish(b) {
		sa, sb := lua.LVAsString(a), lua.LVAsString(b)
		s.budget.chargeString(L, int64(len(sa))+int64(len(sb)))
		L.Push(lua.LString(sa + sb))
		return 1
	}
	mm := L.GetMetaField(a, "__concat")
	if mm == lua.LNil {
		mm = L.GetMetaField(b, "__concat")
	}
	if fn, ok := mm.(*lua.LFunction); ok {
		L.Push(fn)
		L.Push(a)
		L.Push(b)
		L.Call(2, 1)
		return 1
	}
	bad := a
	if stringish(a) {
		bad = b
	}
	L.RaiseError("attempt to concatenate a %s value", bad.Type().String())
	return 0
}

func stringish(v lua.LValue) bool {
	switch v.(type) {
	case lua.LString, lua.LNumber:
		return true
	}
	return false
}

// newValue charges a table built by a constructor (one unit for the table,
// one per array entry, one per keyed field) or a closure (one unit), and
// returns it.
func (s *sandbox) newValue(L *lua.LState) int {
	v := L.Get(1)
	units := int64(1)
	if t, ok := v.(*lua.LTable); ok {
		units += int64(t.Len()) + int64(L.ToInt(2))
	}
	s.budget.chargeInserts(L, units)
	L.SetTop(1)
	return 1
}

// store is the counting replacement of t[k] = v.
func (s *sandbox) store(L *lua.LState) int {
	t, k, v := L.Get(1), L.Get(2), L.Get(3)
	s.materialize(L, t)
	if tb, ok := t.(*lua.LTable); ok {
		if s.isProtected(tb) {
			s.forbid(L, "writing to a shared library table")
		}
		if k == lua.LNil {
			L.RaiseError("table index is nil")
		}
		if v != lua.LNil && tb.RawGet(k) == lua.LNil {
			s.budget.chargeInserts(L, 1)
		}
	}
	L.SetTable(t, k, v)
	return 0
}

func (s *sandbox) wrapBase(g *lua.LTable) {
	L := s.L
	origSetMeta := g.RawGetString("setmetatable").(*lua.LFunction)
	g.RawSetString("setmetatable", L.NewFunction(func(L *lua.LState) int {
		if s.isProtected(L.Get(1)) || s.isProtected(L.Get(2)) {
			s.forbid(L, "setmetatable on a shared library table")
		}
		return origSetMeta.GFunction(L)
	}))
	g.RawSetString("rawset", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		k, v := L.CheckAny(2), L.CheckAny(3)
		if s.isProtected(t) {
			s.forbid(L, "rawset on a shared library table")
		}
		if k == lua.LNil {
			L.RaiseError("table index is nil")
		}
		if v != lua.LNil && t.RawGet(k) == lua.LNil {
			s.budget.chargeInserts(L, 1)
		}
		t.RawSet(k, v)
		L.SetTop(1)
		return 1
	}))
	origToString := g.RawGetString("tostring").(*lua.LFunction)
	g.RawSetString("tostring", L.NewFunction(func(L *lua.LState) int {
		v := L.CheckAny(1)
		switch v.(type) {
		case *lua.LTable, *lua.LFunction, *lua.LUserData:
			if L.GetMetaField(v, "__tostring") == lua.LNil {
				L.Push(lua.LString(s.identity(v)))
				return 1
			}
		}
		return origToString.GFunction(L)
	}))
	origUnpack := g.RawGetString("unpack").(*lua.LFunction)
	g.RawSetString("unpack", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		i := L.OptInt(2, 1)
		j := L.OptInt(3, t.Len())
		if n := int64(j) - int64(i) + 1; n > 0 {
			if n > int64(s.budget.limits.RegistryMaxSize) {
				s.budget.stop(ErrStackOverflow, "unpack of too many values")
				L.RaiseError("%s", ErrStackOverflow.Error())
			}
			s.budget.chargeInserts(L, n)
		}
		return origUnpack.GFunction(L)
	}))
}

func (s *sandbox) wrapTable(tablib *lua.LTable) {
	L := s.L
	b := s.budget
	orig := func(name string) lua.LGFunction { return tablib.RawGetString(name).(*lua.LFunction).GFunction }
	guard := func(name string, charge func(L *lua.LState)) {
		fn := orig(name)
		tablib.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			if s.isProtected(L.Get(1)) {
				s.forbid(L, "table."+name+" on a shared library table")
			}
			if charge != nil {
				charge(L)
			}
			return fn(L)
		}))
	}
	guard("insert", func(L *lua.LState) { b.chargeInserts(L, 1) })
	guard("remove", nil)
	guard("sort", nil)
	guard("concat", func(L *lua.LState) {
		t := L.CheckTable(1)
		sep := int64(len(L.OptString(2, "")))
		var size int64
		n := t.Len()
		for i := 1; i <= n; i++ {
			size += int64(len(lua.LVAsString(t.RawGetInt(i)))) + sep
			if size > int64(b.limits.MaxStringBytes) {
				break
			}
		}
		b.chargeString(L, size)
	})
}

// random is a deterministic replacement of math.random: a xorshift
// generator whose seed is reset before every call, so a script that rolls
// dice gets the same numbers on every run.
func (s *sandbox) random(L *lua.LState) int {
	s.rng ^= s.rng << 13
	s.rng ^= s.rng >> 7
	s.rng ^= s.rng << 17
	f := float64(s.rng>>11) / float64(1<<53)
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(f))
	case 1:
		m := L.CheckInt(1)
		if m < 1 {
			L.ArgError(1, "interval is empty")
		}
		L.Push(lua.LNumber(1 + int(f*float64(m))))
	default:
		m, n := L.CheckInt(1), L.CheckInt(2)
		if m > n {
			L.ArgError(2, "interval is empty")
		}
		L.Push(lua.LNumber(m + int(f*float64(n-m+1))))
	}
	return 1
}

func (s *sandbox) randomseed(L *lua.LState) int {
	s.rng = uint64(L.CheckInt64(1))*2654435761 + 1
	return 0
}
