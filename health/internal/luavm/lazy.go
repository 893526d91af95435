package luavm

import (
	"fmt"
	"math"
	"slices"

	lua "github.com/yuin/gopher-lua"
)

// Objects reach scripts lazily. A health script reads a handful of fields
// (metadata.generation, status.conditions) of an object that may hold
// hundreds (managedFields, the last-applied annotation, the whole spec), and
// building a gopher-lua table costs several allocations per key. So each
// JSON object becomes a stub: an empty table whose metatable's __index
// fills it in (all its keys, its nested objects as further stubs) on first
// use, and then removes the metatable. Arrays are built at once (their
// element objects are stubs), so # and ipairs see them whole.
//
// Operations that bypass __index (pairs, next, rawget, rawset, the table
// library, unpack, getmetatable, setmetatable, the counting store, and the
// value handed back to the caller) fill the stub first, so a script cannot
// tell a stub from a table built eagerly.

// lazyEntry is the part of the object a stub stands for.
type lazyEntry struct {
	m     map[string]any
	depth int
}

// maxObjectDepth bounds the nesting of objects handed to scripts.
const maxObjectDepth = 100

// newLazyMeta builds the stubs' shared metatable.
func (s *sandbox) newLazyMeta() *lua.LTable {
	meta := s.L.NewTable()
	meta.RawSetString("__index", s.L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		s.materialize(L, t)
		L.Push(L.GetTable(t, L.Get(2)))
		return 1
	}))
	return meta
}

// stub returns a stub table for m.
func (s *sandbox) stub(L *lua.LState, m map[string]any, depth int) *lua.LTable {
	// Size the hash part now: filling the stub in later would otherwise
	// start from gopher-lua's default of 32 slots, whatever the object.
	t := L.CreateTable(0, len(m))
	t.Metatable = s.lazyMeta
	s.pending[t] = lazyEntry{m: m, depth: depth}
	return t
}

// materialize fills a stub in, keeping any key the script already set.
// It does nothing to other values.
func (s *sandbox) materialize(L *lua.LState, v lua.LValue) {
	t, ok := v.(*lua.LTable)
	if !ok {
		return
	}
	e, ok := s.pending[t]
	if !ok {
		return
	}
	delete(s.pending, t)
	t.Metatable = lua.LNil
	keys := make([]string, 0, len(e.m))
	for k := range e.m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // pairs() then visits keys in the same order every run
	for _, k := range keys {
		if t.RawGetString(k) != lua.LNil {
			continue
		}
		t.RawSetString(k, s.toLua(L, e.m[k], e.depth+1))
	}
}

// materializeArgs fills in stubs among the first n arguments of a call.
func (s *sandbox) materializeArgs(L *lua.LState, n int) {
	for i := 1; i <= n && i <= L.GetTop(); i++ {
		s.materialize(L, L.Get(i))
	}
}

// toLua converts one JSON value.
func (s *sandbox) toLua(L *lua.LState, v any, depth int) lua.LValue {
	if depth > maxObjectDepth {
		L.RaiseError("object nested deeper than %d levels", maxObjectDepth)
	}
	switch v := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(v)
	case string:
		return lua.LString(v)
	case int64:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	case int32:
		return lua.LNumber(v)
	case float64:
		if math.IsNaN(v) {
			return lua.LNumber(0)
		}
		return lua.LNumber(v)
	case []any:
		t := L.CreateTable(len(v), 0)
		for _, e := range v {
			t.Append(s.toLua(L, e, depth+1))
		}
		return t
	case map[string]any:
		return s.stub(L, v, depth)
	default:
		return lua.LString(fmt.Sprint(v))
	}
}
