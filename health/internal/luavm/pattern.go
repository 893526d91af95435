package luavm

import (
	"strings"
)

// This file is a Lua 5.1 pattern matcher written for the sandbox. gopher-lua
// ships one, but it backtracks without limit inside a single VM
// instruction: string.find(string.rep("a", 400), ".-.-.-b") runs for over a
// minute, far past any time limit. This matcher follows the same
// semantics (classes, sets, anchors, the four quantifiers, captures,
// position captures, %b, %f and back-references) and charges every step
// to the call's instruction budget, so a pathological pattern stops with
// ErrInstructionLimit or ErrTimeout like any other loop.

const (
	maxCaptures     = 32  // as LUA_MAXCAPTURES
	maxMatchDepth   = 200 // as MAXCCALLS: recursion of the matcher
	capUnfinished   = -1
	capPosition     = -2
	patternSpecials = "^$*+?.([%-"
)

// patternError is a malformed pattern or a limit reached while matching;
// the caller raises it as a Lua error.
type patternError struct{ msg string }

type capture struct{ init, len int }

// matcher matches one pattern against one subject.
type matcher struct {
	src, pat string
	level    int
	capture  [maxCaptures]capture
	depth    int
	b        *budget
	err      *patternError
}

func (m *matcher) fail(msg string) int {
	if m.err == nil {
		m.err = &patternError{msg: msg}
	}
	return -1
}

// step charges one matching step to the instruction budget. It returns
// false once the call must stop.
func (m *matcher) step() bool {
	if m.err != nil {
		return false
	}
	b := m.b
	b.steps++
	if b.steps&(checkEvery-1) == 0 {
		b.check()
	}
	if b.err != nil {
		m.err = &patternError{msg: b.err.Error()}
		return false
	}
	return true
}

func (m *matcher) classEnd(p int) int {
	c := m.pat[p]
	p++
	switch c {
	case '%':
		if p >= len(m.pat) {
			return m.fail("malformed pattern (ends with '%')")
		}
		return p + 1
	case '[':
		if p < len(m.pat) && m.pat[p] == '^' {
			p++
		}
		for { // the first character of a set is never its end: "[]]" holds ']'
			if p >= len(m.pat) {
				return m.fail("malformed pattern (missing ']')")
			}
			c := m.pat[p]
			p++
			if c == '%' {
				if p >= len(m.pat) {
					return m.fail("malformed pattern (missing ']')")
				}
				p++
			}
			if p < len(m.pat) && m.pat[p] == ']' {
				return p + 1
			}
		}
	default:
		return p
	}
}

func isalpha(c byte) bool  { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isdigit(c byte) bool  { return '0' <= c && c <= '9' }
func islower(c byte) bool  { return 'a' <= c && c <= 'z' }
func isupper(c byte) bool  { return 'A' <= c && c <= 'Z' }
func isspace(c byte) bool  { return c == ' ' || '\t' <= c && c <= '\r' }
func iscntrl(c byte) bool  { return c < 32 || c == 127 }
func ispunct(c byte) bool  { return c > 32 && c < 127 && !isalpha(c) && !isdigit(c) }
func isxdigit(c byte) bool { return isdigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// matchClass reports whether c is in the class %cl (C locale).
func matchClass(c, cl byte) bool {
	var res bool
	switch cl | 0x20 {
	case 'a':
		res = isalpha(c)
	case 'c':
		res = iscntrl(c)
	case 'd':
		res = isdigit(c)
	case 'l':
		res = islower(c)
	case 'p':
		res = ispunct(c)
	case 's':
		res = isspace(c)
	case 'u':
		res = isupper(c)
	case 'w':
		res = isalpha(c) || isdigit(c)
	case 'x':
		res = isxdigit(c)
	case 'z':
		res = c == 0
	default:
		return cl == c
	}
	if isupper(cl) {
		return !res
	}
	return res
}

// matchSet reports whether c is in the set pat[p:ec+1], p at '[' and ec
// at the closing ']'.
func (m *matcher) matchSet(c byte, p, ec int) bool {
	sig := true
	if m.pat[p+1] == '^' {
		sig = false
		p++
	}
	for p++; p < ec; p++ {
		switch {
		case m.pat[p] == '%':
			p++
			if matchClass(c, m.pat[p]) {
				return sig
			}
		case p+2 < ec && m.pat[p+1] == '-':
			if m.pat[p] <= c && c <= m.pat[p+2] {
				return sig
			}
			p += 2
		case m.pat[p] == c:
			return sig
		}
	}
	return !sig
}

// single reports whether src[s] matches the single-character class
// pat[p:ep].
func (m *matcher) single(s, p, ep int) bool {
	if s >= len(m.src) {
		return false
	}
	c := m.src[s]
	switch m.pat[p] {
	case '.':
		return true
	case '%':
		return matchClass(c, m.pat[p+1])
	case '[':
		return m.matchSet(c, p, ep-1)
	default:
		return m.pat[p] == c
	}
}

// match returns the end of the match of pat[p:] at src[s:], or -1.
func (m *matcher) match(s, p int) int {
	m.depth++
	defer func() { m.depth-- }()
	if m.depth > maxMatchDepth {
		return m.fail("pattern too complex")
	}
	for {
		if !m.step() {
			return -1
		}
		if p == len(m.pat) {
			return s
		}
		switch m.pat[p] {
		case '(':
			if p+1 < len(m.pat) && m.pat[p+1] == ')' {
				return m.startCapture(s, p+2, capPosition)
			}
			return m.startCapture(s, p+1, capUnfinished)
		case ')':
			return m.endCapture(s, p+1)
		case '$':
			if p+1 == len(m.pat) {
				if s == len(m.src) {
					return s
				}
				return -1
			}
		case '%':
			if p+1 < len(m.pat) {
				switch c := m.pat[p+1]; {
				case c == 'b':
					s = m.matchBalance(s, p+2)
					if s == -1 {
						return -1
					}
					p += 4
					continue
				case c == 'f':
					p += 2
					if p >= len(m.pat) || m.pat[p] != '[' {
						return m.fail("missing '[' after '%f' in pattern")
					}
					ep := m.classEnd(p)
					if ep == -1 {
						return -1
					}
					var prev, cur byte
					if s > 0 {
						prev = m.src[s-1]
					}
					if s < len(m.src) {
						cur = m.src[s]
					}
					if m.matchSet(prev, p, ep-1) || !m.matchSet(cur, p, ep-1) {
						return -1
					}
					p = ep
					continue
				case isdigit(c):
					s = m.matchCapture(s, c)
					if s == -1 {
						return -1
					}
					p += 2
					continue
				}
			}
		}
		ep := m.classEnd(p)
		if ep == -1 {
			return -1
		}
		matched := m.single(s, p, ep)
		if ep < len(m.pat) {
			switch m.pat[ep] {
			case '?':
				if matched {
					if r := m.match(s+1, ep+1); r != -1 || m.err != nil {
						return r
					}
				}
				p = ep + 1
				continue
			case '*':
				return m.maxExpand(s, p, ep)
			case '+':
				if !matched {
					return -1
				}
				return m.maxExpand(s+1, p, ep)
			case '-':
				return m.minExpand(s, p, ep)
			}
		}
		if !matched {
			return -1
		}
		s++
		p = ep
	}
}

func (m *matcher) maxExpand(s, p, ep int) int {
	i := 0
	for m.single(s+i, p, ep) {
		if !m.step() {
			return -1
		}
		i++
	}
	for ; i >= 0; i-- {
		if r := m.match(s+i, ep+1); r != -1 || m.err != nil {
			return r
		}
	}
	return -1
}

func (m *matcher) minExpand(s, p, ep int) int {
	for {
		if r := m.match(s, ep+1); r != -1 || m.err != nil {
			return r
		}
		if !m.single(s, p, ep) {
			return -1
		}
		s++
	}
}

func (m *matcher) startCapture(s, p, what int) int {
	if m.level >= maxCaptures {
		return m.fail("too many captures")
	}
	m.capture[m.level] = capture{init: s, len: what}
	m.level++
	r := m.match(s, p)
	if r == -1 {
		m.level--
	}
	return r
}

func (m *matcher) endCapture(s, p int) int {
	l := -1
	for i := m.level - 1; i >= 0; i-- {
		if m.capture[i].len == capUnfinished {
			l = i
			break
		}
	}
	if l < 0 {
		return m.fail("invalid pattern capture")
	}
	m.capture[l].len = s - m.capture[l].init
	r := m.match(s, p)
	if r == -1 {
		m.capture[l].len = capUnfinished
	}
	return r
}

func (m *matcher) matchBalance(s, p int) int {
	if p+1 >= len(m.pat) {
		return m.fail("missing arguments to '%b'")
	}
	if s >= len(m.src) || m.src[s] != m.pat[p] {
		return -1
	}
	open, close := m.pat[p], m.pat[p+1]
	depth := 1
	for s++; s < len(m.src); s++ {
		if !m.step() {
			return -1
		}
		switch m.src[s] {
		case close:
			depth--
			if depth == 0 {
				return s + 1
			}
		case open:
			depth++
		}
	}
	return -1
}

func (m *matcher) matchCapture(s int, digit byte) int {
	l := int(digit - '1')
	if l < 0 || l >= m.level || m.capture[l].len == capUnfinished {
		return m.fail("invalid capture index")
	}
	c := m.capture[l]
	if c.len < 0 || len(m.src)-s < c.len {
		return -1
	}
	if m.src[c.init:c.init+c.len] == m.src[s:s+c.len] {
		return s + c.len
	}
	return -1
}

// captureValue is capture i of a match spanning src[s:e]: a string, or for
// a position capture its one-based position. Without explicit captures,
// capture 0 is the whole match.
type captureValue struct {
	str      string
	pos      int
	position bool
}

func (m *matcher) captureAt(i, s, e int) (captureValue, *patternError) {
	if i >= m.level {
		if i == 0 {
			return captureValue{str: m.src[s:e]}, nil
		}
		return captureValue{}, &patternError{msg: "invalid capture index"}
	}
	c := m.capture[i]
	switch c.len {
	case capUnfinished:
		return captureValue{}, &patternError{msg: "unfinished capture"}
	case capPosition:
		return captureValue{pos: c.init + 1, position: true}, nil
	}
	return captureValue{str: m.src[c.init : c.init+c.len]}, nil
}

// captures returns every capture of a match (or the whole match when the
// pattern has none and wholeIfNone is set).
func (m *matcher) captures(s, e int, wholeIfNone bool) ([]captureValue, *patternError) {
	n := m.level
	if n == 0 && wholeIfNone {
		n = 1
	}
	out := make([]captureValue, n)
	for i := range out {
		v, err := m.captureAt(i, s, e)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// hasSpecials reports whether pat needs the matcher at all.
func hasSpecials(pat string) bool { return strings.ContainsAny(pat, patternSpecials) }
