package diff

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// writeYAML writes a normalised object as block YAML with sorted keys, in
// the layout kubectl prints (lists at their key's indentation). It is
// written for the text diff only, which it makes several times cheaper
// than a JSON round trip through a YAML library: strings that could read
// as anything but themselves are double-quoted, multi-line strings use
// literal blocks so that one changed line of a configuration file is one
// changed line of the diff.
func writeYAML(b *strings.Builder, m map[string]any) {
	writeMapYAML(b, m, 0)
}

// writeMapYAML writes m's keys at indent; a negative indent -n means the
// first key is already positioned (after a list dash) and the others go
// at n.
func writeMapYAML(b *strings.Builder, m map[string]any, indent int) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	skipFirst := indent < 0
	if skipFirst {
		indent = -indent
	}
	for i, k := range keys {
		if i > 0 || !skipFirst {
			writeIndent(b, indent)
		}
		writeKeyValueYAML(b, k, m[k], indent)
	}
}

func writeKeyValueYAML(b *strings.Builder, k string, v any, indent int) {
	writeScalarString(b, k, indent)
	b.WriteByte(':')
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			b.WriteString(" {}\n")
			return
		}
		b.WriteByte('\n')
		writeMapYAML(b, x, indent+2)
	case []any:
		if len(x) == 0 {
			b.WriteString(" []\n")
			return
		}
		b.WriteByte('\n')
		writeListYAML(b, x, indent)
	default:
		b.WriteByte(' ')
		writeScalarYAML(b, v, indent)
		b.WriteByte('\n')
	}
}

func writeListYAML(b *strings.Builder, l []any, indent int) {
	for _, item := range l {
		writeIndent(b, indent)
		b.WriteString("- ")
		switch x := item.(type) {
		case map[string]any:
			if len(x) == 0 {
				b.WriteString("{}\n")
				continue
			}
			// The first key follows the dash; the others align with it.
			writeMapYAML(b, x, -(indent + 2))
		case []any:
			if len(x) == 0 {
				b.WriteString("[]\n")
				continue
			}
			b.WriteByte('\n')
			writeListYAML(b, x, indent+2)
		default:
			writeScalarYAML(b, item, indent+2)
			b.WriteByte('\n')
		}
	}
}

func writeIndent(b *strings.Builder, n int) {
	for ; n > 0; n-- {
		b.WriteByte(' ')
	}
}

func writeScalarYAML(b *strings.Builder, v any, indent int) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case int:
		b.WriteString(strconv.Itoa(x))
	case float64:
		switch {
		case math.IsInf(x, 1):
			b.WriteString(".inf")
		case math.IsInf(x, -1):
			b.WriteString("-.inf")
		case math.IsNaN(x):
			b.WriteString(".nan")
		default:
			b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		}
	case string:
		writeScalarString(b, x, indent)
	default:
		b.WriteString(strconv.Quote(strings.TrimSpace(stringOf(x))))
	}
}

func stringOf(v any) string {
	if s, ok := v.(interface{ String() string }); ok {
		return s.String()
	}
	return "?"
}

func writeScalarString(b *strings.Builder, s string, indent int) {
	switch {
	case plainSafe(s):
		b.WriteString(s)
	case literalSafe(s):
		b.WriteByte('|')
		if !strings.HasSuffix(s, "\n") {
			b.WriteByte('-')
		}
		b.WriteByte('\n')
		// The last line gets its newline from the caller.
		for _, line := range strings.SplitAfter(strings.TrimSuffix(s, "\n"), "\n") {
			if strings.TrimSuffix(line, "\n") != "" {
				writeIndent(b, indent+2)
			}
			b.WriteString(line)
		}
	default:
		b.WriteString(strconv.Quote(s))
	}
}

// plainSafe reports whether s can be written unquoted and read back as the
// same string: a conservative character set, and nothing that YAML would
// read as a number, a boolean or null.
func plainSafe(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	c0 := s[0]
	if !(c0 >= 'a' && c0 <= 'z' || c0 >= 'A' && c0 <= 'Z' || c0 == '/' || c0 == '_' || c0 >= '0' && c0 <= '9') {
		return false
	}
	digitsOnly := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '-', c == '_', c == '/', c == '.', c == '@', c == '+', c == '=', c == '%', c == '~':
			digitsOnly = false
		case c == ':' && i+1 < len(s) && s[i+1] != ' ':
			digitsOnly = false
		default:
			return false
		}
	}
	if digitsOnly {
		return false
	}
	if _, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64); err == nil {
		return false
	}
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0o") || strings.HasPrefix(s, "0b") || strings.Contains(s, ":") && startsWithDigit(s) {
		return false
	}
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "y", "n", "null", "nan", "inf":
		return false
	}
	return true
}

func startsWithDigit(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }

// literalSafe reports whether a multi-line s can be written as a literal
// block: printable, no tabs, no carriage returns, a first line that does not
// start with a space, no trailing blank lines beyond one newline.
func literalSafe(s string) bool {
	if !strings.Contains(s, "\n") || strings.HasPrefix(s, " ") || strings.HasSuffix(s, "\n\n") || strings.HasSuffix(s, " ") {
		return false
	}
	for _, r := range s {
		if r == '\n' {
			continue
		}
		if r < 0x20 || r == 0x7f || r == '\uFEFF' {
			return false
		}
	}
	for _, line := range strings.Split(s, "\n") {
		if strings.HasSuffix(line, " ") {
			return false
		}
	}
	return true
}
