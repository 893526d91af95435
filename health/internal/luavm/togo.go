package luavm

import (
	"fmt"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// maxResultNodes bounds how many values one result may convert to. A
// script cannot build more tables than its insert budget, but it can make
// one table reachable many times (t.a = u; t.b = u, nested), and the
// converted tree would then grow exponentially.
const maxResultNodes = 1 << 20

// converter turns a value a script returned into JSON-shaped Go values.
type converter struct {
	s      *sandbox
	L      *lua.LState
	script string
	budget int
}

// toGo converts v by these rules, which are ToGo's documentation:
//
//   - nil, booleans and strings convert to themselves;
//   - a number converts to int64 when it is integral and within ±2^53,
//     otherwise to float64; NaN and infinities are an error;
//   - a table whose keys are exactly 1..n (n > 0) converts to []any;
//   - any other non-empty table must have only string keys and converts
//     to map[string]any;
//   - an empty table converts to an empty map[string]any: Lua cannot tell
//     {} from [], and callers that know the original shape fix it;
//   - functions, userdata and threads are an error, as are tables nested
//     deeper than maxObjectDepth (which also stops cycles) and results of
//     more than maxResultNodes values.
func (c *converter) toGo(v lua.LValue, depth int) (any, error) {
	c.budget--
	if c.budget < 0 {
		return nil, &Error{Script: c.script, Kind: ErrMemoryLimit, Detail: fmt.Sprintf("result has more than %d values", maxResultNodes)}
	}
	switch v := v.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LBool:
		return bool(v), nil
	case lua.LString:
		return string(v), nil
	case lua.LNumber:
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, c.fail("result holds the number %v, which JSON cannot carry", f)
		}
		if f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
			return int64(f), nil
		}
		return f, nil
	case *lua.LTable:
		if depth > maxObjectDepth {
			return nil, c.fail("result nested deeper than %d levels (a table that contains itself?)", maxObjectDepth)
		}
		return c.table(v, depth)
	default:
		return nil, c.fail("result holds a %s, which is not data", v.Type())
	}
}

func (c *converter) table(t *lua.LTable, depth int) (any, error) {
	c.s.materialize(c.L, t)
	n := t.MaxN()
	count := 0
	stringKeys := true
	t.ForEach(func(k, _ lua.LValue) {
		count++
		if _, ok := k.(lua.LString); !ok {
			stringKeys = false
		}
	})
	if n > 0 && count == n {
		out := make([]any, 0, n)
		for i := 1; i <= n; i++ {
			e, err := c.toGo(t.RawGetInt(i), depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	}
	if !stringKeys {
		return nil, c.fail("result holds a table that mixes list entries and named keys")
	}
	out := make(map[string]any, count)
	var err error
	t.ForEach(func(k, val lua.LValue) {
		if err != nil {
			return
		}
		var e any
		e, err = c.toGo(val, depth+1)
		out[string(k.(lua.LString))] = e
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *converter) fail(format string, args ...any) error {
	return &Error{Script: c.script, Kind: ErrRuntime, Detail: fmt.Sprintf(format, args...)}
}
