package luavm

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// Clock tells the sandbox the time, for os.time and os.date. Tests inject a
// fixed clock to make scripts that look at ages deterministic.
type Clock func() time.Time

// osLibrary returns the safe os subset: time, date and clock. Everything
// else os offers (execute, exit, getenv, remove, rename, tmpname, setenv)
// raises ErrForbidden.
func (s *sandbox) osLibrary() *lua.LTable {
	L := s.L
	t := L.NewTable()
	t.RawSetString("time", L.NewFunction(s.osTime))
	t.RawSetString("date", L.NewFunction(s.osDate))
	t.RawSetString("clock", L.NewFunction(s.osClock))
	for _, name := range []string{"execute", "exit", "getenv", "remove", "rename", "tmpname", "setenv", "setlocale", "difftime"} {
		name := name
		t.RawSetString(name, L.NewFunction(func(L *lua.LState) int { s.forbid(L, "os."+name); return 0 }))
	}
	// difftime is harmless: give it back.
	t.RawSetString("difftime", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LNumber(L.CheckNumber(1) - L.OptNumber(2, 0)))
		return 1
	}))
	return t
}

// osTime implements os.time([table]) in UTC, reading the table as
// gopher-lua (Argo CD's interpreter) does: a field may be a number or a
// numeric string ("2024", " 07", "0x1F"), and a missing or unreadable
// field takes gopher-lua's default (year 1900, month 1, day 1, hour 12,
// min 0, sec 0), so scripts written against Argo CD get the same answer.
func (s *sandbox) osTime(L *lua.LState) int {
	if L.GetTop() == 0 || L.Get(1) == lua.LNil {
		L.Push(lua.LNumber(s.clock().Unix()))
		return 1
	}
	t := L.CheckTable(1)
	field := func(name string, def int) int { return intField(t.RawGetString(name), def) }
	tm := time.Date(field("year", 1900), time.Month(field("month", 1)), field("day", 1),
		field("hour", 12), field("min", 0), field("sec", 0), 0, time.UTC)
	L.Push(lua.LNumber(tm.Unix()))
	return 1
}

// intField reads one date-table field as gopher-lua's getIntField does.
func intField(v lua.LValue, def int) int {
	switch lv := v.(type) {
	case lua.LNumber:
		return int(lv)
	case lua.LString:
		str := strings.TrimLeft(string(lv), " ")
		if strings.HasPrefix(str, "0") && !strings.HasPrefix(str, "0x") && !strings.HasPrefix(str, "0X") {
			if str = strings.TrimLeft(str, "0"); str == "" {
				return 0
			}
		}
		if n, err := parseLuaNumber(str); err == nil {
			return int(n)
		}
	}
	return def
}

// parseLuaNumber reads a decimal or hexadecimal number literal.
func parseLuaNumber(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		n, err := strconv.ParseUint(h, 16, 64)
		return float64(n), err
	}
	return strconv.ParseFloat(s, 64)
}

// osClock returns the seconds spent in this call so far.
func (s *sandbox) osClock(L *lua.LState) int {
	L.Push(lua.LNumber(time.Since(s.budget.start).Seconds()))
	return 1
}

// osDate implements os.date([format [, time]]) in UTC: "*t" returns a
// table; otherwise the strftime directives %a %A %b %B %c %d %H %I %j %m
// %M %p %S %w %x %X %y %Y %Z %% are understood. A leading "!" is accepted
// and ignored (the sandbox has no local time zone).
func (s *sandbox) osDate(L *lua.LState) int {
	format := strings.TrimPrefix(L.OptString(1, "%c"), "!")
	tm := s.clock().UTC()
	if L.GetTop() >= 2 {
		tm = time.Unix(L.CheckInt64(2), 0).UTC()
	}
	if strings.HasPrefix(format, "*t") {
		t := L.NewTable()
		for k, v := range map[string]int{"year": tm.Year(), "month": int(tm.Month()), "day": tm.Day(),
			"hour": tm.Hour(), "min": tm.Minute(), "sec": tm.Second(), "wday": int(tm.Weekday()) + 1, "yday": tm.YearDay()} {
			t.RawSetString(k, lua.LNumber(v))
		}
		t.RawSetString("isdst", lua.LFalse)
		L.Push(t)
		return 1
	}
	s.budget.chargeString(L, int64(len(format))*16)
	L.Push(lua.LString(strftime(format, tm)))
	return 1
}

func strftime(format string, t time.Time) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		switch format[i] {
		case 'a':
			b.WriteString(t.Format("Mon"))
		case 'A':
			b.WriteString(t.Format("Monday"))
		case 'b':
			b.WriteString(t.Format("Jan"))
		case 'B':
			b.WriteString(t.Format("January"))
		case 'c':
			b.WriteString(t.Format("Mon Jan  2 15:04:05 2006"))
		case 'd':
			fmt.Fprintf(&b, "%02d", t.Day())
		case 'H':
			fmt.Fprintf(&b, "%02d", t.Hour())
		case 'I':
			fmt.Fprintf(&b, "%02d", (t.Hour()+11)%12+1)
		case 'j':
			fmt.Fprintf(&b, "%03d", t.YearDay())
		case 'm':
			fmt.Fprintf(&b, "%02d", int(t.Month()))
		case 'M':
			fmt.Fprintf(&b, "%02d", t.Minute())
		case 'p':
			b.WriteString(t.Format("PM"))
		case 'S':
			fmt.Fprintf(&b, "%02d", t.Second())
		case 'w':
			fmt.Fprintf(&b, "%d", int(t.Weekday()))
		case 'x':
			b.WriteString(t.Format("01/02/06"))
		case 'X':
			b.WriteString(t.Format("15:04:05"))
		case 'y':
			fmt.Fprintf(&b, "%02d", t.Year()%100)
		case 'Y':
			fmt.Fprintf(&b, "%d", t.Year())
		case 'Z':
			b.WriteString("UTC")
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
	}
	return b.String()
}
