package diff

// A JSON reader for the last-applied annotation (see lastapplied.go): it
// parses one JSON object into a slice of nodes that share the text's
// memory, accepting only what encoding/json accepts and declining what
// the in-place reading does not handle.

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// lastMaxMembers bounds the members of one object that the in-place reader
// takes (a member is found by a linear search); a larger object is decoded.
const lastMaxMembers = 64

// lastMaxDepth bounds the nesting the in-place reader takes.
const lastMaxDepth = 200

type jkind uint8

const (
	jNull jkind = iota
	jFalse
	jTrue
	jNumber
	jString
	jObject
	jArray
)

// jnode is one value of a JSON text. Nodes live in one slice; an object's
// members and a list's items are linked through next, in their order.
type jnode struct {
	key   string // the member name (a member of an object)
	raw   string // the literal of a scalar
	first int32  // the first member or item; -1 for none
	next  int32  // the next member or item of the parent; -1 for none
	count int32  // the number of members or items
	kind  jkind
	// plain: a string without escapes, valid UTF-8; its value is its
	// literal without the quotes.
	plain bool
}

// text returns the value of a plain string node.
func (n *jnode) text() string { return n.raw[1 : len(n.raw)-1] }

// parseJSONNodes parses s, which must be one JSON object, into nodes (the
// root first), sharing s's memory for names and literals. It accepts only
// what encoding/json accepts, and reports false for that and for what
// viewLastApplied leaves to the decoder.
func parseJSONNodes(s string) ([]jnode, bool) {
	// A generous capacity: every value but the root follows a colon, a
	// comma or an opening bracket.
	p := jparser{s: s, nodes: make([]jnode, 0, 1+strings.Count(s, ":")+strings.Count(s, ",")+strings.Count(s, "["))}
	p.space()
	if p.pos >= len(s) || s[p.pos] != '{' {
		return nil, false
	}
	if _, ok := p.value(0); !ok {
		return nil, false
	}
	p.space()
	if p.pos != len(s) {
		return nil, false
	}
	return p.nodes, true
}

type jparser struct {
	s     string
	pos   int
	nodes []jnode
}

func (p *jparser) space() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// value parses the value at p.pos and returns its node.
func (p *jparser) value(depth int) (int32, bool) {
	if depth > lastMaxDepth || p.pos >= len(p.s) {
		return -1, false
	}
	idx := int32(len(p.nodes))
	p.nodes = append(p.nodes, jnode{first: -1, next: -1})
	switch c := p.s[p.pos]; {
	case c == '{':
		p.nodes[idx].kind = jObject
		return idx, p.members(idx, depth)
	case c == '[':
		p.nodes[idx].kind = jArray
		return idx, p.items(idx, depth)
	case c == '"':
		lit, plain, ok := p.str()
		p.nodes[idx].kind, p.nodes[idx].raw, p.nodes[idx].plain = jString, lit, plain
		return idx, ok
	case c == 't':
		p.nodes[idx].kind = jTrue
		return idx, p.literal("true")
	case c == 'f':
		p.nodes[idx].kind = jFalse
		return idx, p.literal("false")
	case c == 'n':
		p.nodes[idx].kind = jNull
		return idx, p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		lit, ok := p.number()
		p.nodes[idx].kind, p.nodes[idx].raw = jNumber, lit
		return idx, ok
	}
	return -1, false
}

func (p *jparser) literal(word string) bool {
	if !strings.HasPrefix(p.s[p.pos:], word) {
		return false
	}
	p.pos += len(word)
	return true
}

// members parses an object's members, p.pos at its '{'.
func (p *jparser) members(idx int32, depth int) bool {
	p.pos++
	p.space()
	if p.pos < len(p.s) && p.s[p.pos] == '}' {
		p.pos++
		return true
	}
	last := int32(-1)
	for {
		p.space()
		if p.pos >= len(p.s) || p.s[p.pos] != '"' {
			return false
		}
		key, plain, ok := p.str()
		if !ok || !plain {
			return false
		}
		key = key[1 : len(key)-1]
		for c := p.nodes[idx].first; c >= 0; c = p.nodes[c].next {
			if p.nodes[c].key == key {
				return false // encoding/json keeps the last: leave it to it
			}
		}
		p.space()
		if p.pos >= len(p.s) || p.s[p.pos] != ':' {
			return false
		}
		p.pos++
		p.space()
		c, ok := p.value(depth + 1)
		if !ok {
			return false
		}
		p.nodes[c].key = key
		p.link(idx, &last, c)
		if p.nodes[idx].count > lastMaxMembers {
			return false
		}
		p.space()
		if p.pos >= len(p.s) {
			return false
		}
		switch p.s[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return true
		default:
			return false
		}
	}
}

// items parses a list's items, p.pos at its '['.
func (p *jparser) items(idx int32, depth int) bool {
	p.pos++
	p.space()
	if p.pos < len(p.s) && p.s[p.pos] == ']' {
		p.pos++
		return true
	}
	last := int32(-1)
	for {
		p.space()
		c, ok := p.value(depth + 1)
		if !ok {
			return false
		}
		p.link(idx, &last, c)
		p.space()
		if p.pos >= len(p.s) {
			return false
		}
		switch p.s[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return true
		default:
			return false
		}
	}
}

// link appends node c to the members or items of node idx, whose last one
// so far is *last.
func (p *jparser) link(idx int32, last *int32, c int32) {
	if *last < 0 {
		p.nodes[idx].first = c
	} else {
		p.nodes[*last].next = c
	}
	*last = c
	p.nodes[idx].count++
}

// str scans a string literal, p.pos at its opening quote, and returns it
// with its quotes; plain reports no escapes and valid UTF-8.
func (p *jparser) str() (lit string, plain, ok bool) {
	start := p.pos
	p.pos++
	plain = true
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == '"':
			p.pos++
			lit = p.s[start:p.pos]
			return lit, plain && utf8.ValidString(lit), true
		case c == '\\':
			plain = false
			p.pos++
			if p.pos >= len(p.s) {
				return "", false, false
			}
			switch p.s[p.pos] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.pos++
			case 'u':
				if p.pos+5 > len(p.s) {
					return "", false, false
				}
				for _, h := range []byte(p.s[p.pos+1 : p.pos+5]) {
					if !isHex(h) {
						return "", false, false
					}
				}
				p.pos += 5
			default:
				return "", false, false
			}
		case c < 0x20:
			return "", false, false
		default:
			p.pos++
		}
	}
	return "", false, false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// number scans a number literal by JSON's grammar; one that does not fit a
// float64 is refused, as encoding/json refuses it.
func (p *jparser) number() (string, bool) {
	start := p.pos
	if p.s[p.pos] == '-' {
		p.pos++
	}
	if p.pos >= len(p.s) {
		return "", false
	}
	switch c := p.s[p.pos]; {
	case c == '0':
		p.pos++
	case c >= '1' && c <= '9':
		p.digits()
	default:
		return "", false
	}
	if p.pos < len(p.s) && p.s[p.pos] == '.' {
		p.pos++
		if p.digits() == 0 {
			return "", false
		}
	}
	if p.pos < len(p.s) && (p.s[p.pos] == 'e' || p.s[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.s) && (p.s[p.pos] == '+' || p.s[p.pos] == '-') {
			p.pos++
		}
		if p.digits() == 0 {
			return "", false
		}
	}
	lit := p.s[start:p.pos]
	if _, err := strconv.ParseFloat(lit, 64); err != nil {
		return "", false
	}
	return lit, true
}

func (p *jparser) digits() int {
	n := 0
	for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
		p.pos++
		n++
	}
	return n
}
