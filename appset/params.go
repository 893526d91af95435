package appset

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Params is one parameter set. Under the fasttemplate default its values
// are strings under flattened keys ("path.basename", "values.env"); under
// goTemplate they nest ({{.path.basename}}, {{index .path.segments 1}}).
type Params = map[string]any

var invalidNameChars = regexp.MustCompile(`[^-a-z0-9.]`)

// SanitizeName turns a string into a DNS-1123 subdomain the way Argo CD's
// path.basenameNormalized and nameNormalized do: lowercased, every
// character other than a-z, 0-9, '-' and '.' replaced by '-', cut to 253
// characters, leading and trailing '-' and '.' removed.
func SanitizeName(name string) string {
	name = invalidNameChars.ReplaceAllString(strings.ToLower(name), "-")
	if len(name) > 253 {
		name = name[:253]
	}
	return strings.Trim(name, "-.")
}

// pathParams adds the parameters of a repository path: for a directory
// (file == ""), path, path.basename, path.basenameNormalized, path[n]
// (path.segments under goTemplate); for a config file, the same of its
// folder plus path.filename and path.filenameNormalized. prefix is the
// generator's pathParamPrefix.
func pathParams(p Params, dir, file, prefix string, goTemplate bool) {
	segments := strings.Split(dir, "/")
	base := path.Base(dir)
	if goTemplate {
		m := map[string]any{
			"path":               dir,
			"basename":           base,
			"basenameNormalized": SanitizeName(base),
			"segments":           toAny(segments),
		}
		if file != "" {
			m["filename"] = file
			m["filenameNormalized"] = SanitizeName(file)
		}
		if prefix != "" {
			p[prefix] = map[string]any{"path": m}
		} else {
			p["path"] = m
		}
		return
	}
	name := "path"
	if prefix != "" {
		name = prefix + ".path"
	}
	p[name] = dir
	p[name+".basename"] = base
	p[name+".basenameNormalized"] = SanitizeName(base)
	for i, s := range segments {
		p[name+"["+strconv.Itoa(i)+"]"] = s
	}
	if file != "" {
		p[name+".filename"] = file
		p[name+".filenameNormalized"] = SanitizeName(file)
	}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// flatten adds v under key with nested maps and lists flattened in dot
// style ("a.b.c", "list.0"), every leaf as a string, as Argo CD's git
// files generator does outside goTemplate.
func flatten(p Params, key string, v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			if key == "" {
				flatten(p, k, c)
			} else {
				flatten(p, key+"."+k, c)
			}
		}
	case []any:
		for i, c := range t {
			flatten(p, key+"."+strconv.Itoa(i), c)
		}
	default:
		p[key] = stringOf(t)
	}
}

// stringOf renders a leaf value as the flat templates see it.
func stringOf(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case json.Number:
		return t.String()
	default:
		return fmt.Sprint(t)
	}
}

// flatParams returns p as a flat map of strings (what selectors match).
func flatParams(p Params) map[string]string {
	flat := Params{}
	flatten(flat, "", map[string]any(p))
	out := make(map[string]string, len(flat))
	for k, v := range flat {
		out[k] = v.(string)
	}
	return out
}

// addValues renders a generator's values with the set's parameters and
// adds them as values.<key> (flat) or .values (goTemplate).
func (c *genCtx) addValues(p Params, values map[string]string) error {
	if len(values) == 0 {
		return nil
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	rendered := map[string]any{}
	for _, k := range keys {
		v, err := c.tmpl.renderString(values[k], p)
		if err != nil {
			return fmt.Errorf("values.%s: %w", k, err)
		}
		rendered[k] = v
	}
	if c.tmpl.goTemplate {
		p["values"] = rendered
		return nil
	}
	for k, v := range rendered {
		p["values."+k] = v
	}
	return nil
}

// cloneParams copies a parameter set deeply enough that adding keys to the
// copy (at any nesting level of maps) leaves the original alone.
func cloneParams(p Params) Params {
	out := make(Params, len(p))
	for k, v := range p {
		if m, ok := v.(map[string]any); ok {
			v = cloneParams(m)
		}
		out[k] = v
	}
	return out
}
