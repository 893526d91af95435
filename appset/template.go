package appset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"
	gosync "sync"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/yaml"
)

// maxRendered bounds what one template string may render to; more is a
// runaway template (ErrTemplateLoop).
const maxRendered = 1 << 20

// templater renders strings with a set's parameters: the fasttemplate
// default or text/template with sprig. Parsed go templates are cached by
// their text; a templater is safe for concurrent use.
type templater struct {
	goTemplate bool
	options    []string
	funcs      template.FuncMap

	mu     gosync.Mutex
	parsed map[string]*template.Template
}

func newTemplater(goTemplate bool, options []string) *templater {
	t := &templater{goTemplate: goTemplate, options: options, parsed: map[string]*template.Template{}}
	if goTemplate {
		t.funcs = funcMap()
	}
	return t
}

// funcMap is sprig's text functions without those that read the
// controller's environment or network (env, expandenv, getHostByName),
// plus Argo CD's normalize, slugify, toYaml, fromYaml and fromYamlArray.
func funcMap() template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	delete(f, "getHostByName")
	f["normalize"] = SanitizeName
	f["slugify"] = slugify
	f["toYaml"] = func(v any) (string, error) {
		b, err := yaml.Marshal(v)
		return strings.TrimSuffix(string(b), "\n"), err
	}
	f["fromYaml"] = func(s string) (map[string]any, error) {
		var m map[string]any
		err := yaml.Unmarshal([]byte(s), &m)
		return m, err
	}
	f["fromYamlArray"] = func(s string) ([]any, error) {
		var a []any
		err := yaml.Unmarshal([]byte(s), &a)
		return a, err
	}
	return f
}

var slugChars = regexp.MustCompile(`[^a-z0-9]+`)

// slugify is Argo CD's slugify: slugify NAME, or slugify MAXSIZE
// SMARTTRUNCATE NAME (defaults 50 and true): lowercased, runs of other
// characters turned into '-', cut to MAXSIZE (at a '-' when smart).
func slugify(args ...any) (string, error) {
	maxSize, smart, name := 50, true, ""
	switch len(args) {
	case 1:
		name = fmt.Sprint(args[0])
	case 3:
		n, err := strconv.Atoi(fmt.Sprint(args[0]))
		if err != nil {
			return "", fmt.Errorf("slugify: max size %v: %w", args[0], err)
		}
		maxSize = n
		smart = fmt.Sprint(args[1]) == "true"
		name = fmt.Sprint(args[2])
	default:
		return "", fmt.Errorf("slugify takes 1 or 3 arguments, got %d", len(args))
	}
	s := strings.Trim(slugChars.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if maxSize > 0 && len(s) > maxSize {
		cut := s[:maxSize]
		if i := strings.LastIndexByte(cut, '-'); smart && i > 0 {
			cut = cut[:i]
		}
		s = strings.Trim(cut, "-")
	}
	return s, nil
}

// renderString renders one string with p.
func (t *templater) renderString(s string, p Params) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil
	}
	if !t.goTemplate {
		return fastRender(s, p), nil
	}
	tmpl, err := t.parse(s)
	if err != nil {
		return "", err
	}
	w := &limitedBuffer{max: maxRendered}
	if err := tmpl.Execute(w, p); err != nil {
		switch {
		case errors.Is(err, errTooLong), strings.Contains(err.Error(), "exceeded maximum template depth"):
			return "", fmt.Errorf("%w: %q: %v", ErrTemplateLoop, s, err)
		case strings.Contains(err.Error(), "map has no entry for key"):
			return "", fmt.Errorf("%w: %q: %v", ErrMissingKey, s, err)
		}
		return "", fmt.Errorf("template %q: %w", s, err)
	}
	return w.String(), nil
}

func (t *templater) parse(s string) (*template.Template, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if tmpl, ok := t.parsed[s]; ok {
		return tmpl, nil
	}
	tmpl, err := template.New("").Option(t.options...).Funcs(t.funcs).Parse(s)
	if err != nil {
		return nil, fmt.Errorf("template %q: %w", s, err)
	}
	t.parsed[s] = tmpl
	return tmpl, nil
}

// fastRender is fasttemplate as Argo CD uses it: each {{ key }} (spaces
// trimmed) whose key is a parameter is replaced by its value; any other
// tag is left as written.
func fastRender(s string, p Params) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			break
		}
		j := strings.Index(s[i+2:], "}}")
		if j < 0 {
			break
		}
		b.WriteString(s[:i])
		key := strings.TrimSpace(s[i+2 : i+2+j])
		if v, ok := p[key]; ok {
			b.WriteString(stringOf(v))
		} else {
			b.WriteString(s[i : i+4+j])
		}
		s = s[i+4+j:]
	}
	b.WriteString(s)
	return b.String()
}

var errTooLong = fmt.Errorf("rendered output over %d bytes", maxRendered)

type limitedBuffer struct {
	bytes.Buffer
	max int
}

// Write implements io.Writer within the limit.
func (l *limitedBuffer) Write(p []byte) (int, error) {
	if l.Len()+len(p) > l.max {
		return 0, errTooLong
	}
	return l.Buffer.Write(p)
}

// renderTree renders every string (map keys included) of a JSON tree.
func (t *templater) renderTree(v any, p Params) (any, error) {
	switch x := v.(type) {
	case string:
		return t.renderString(x, p)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, c := range x {
			rk, err := t.renderString(k, p)
			if err != nil {
				return nil, err
			}
			rc, err := t.renderTree(c, p)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[rk] = rc
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			rc, err := t.renderTree(c, p)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = rc
		}
		return out, nil
	default:
		return v, nil
	}
}

// templateTree is a Template as a JSON tree {metadata, spec}.
func templateTree(t *Template) (map[string]any, error) {
	js, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// overlay merges an override template over a base, as Argo CD merges a
// generator's template over the set's: every non-empty value of the
// override wins, maps merge key by key, lists are replaced.
func overlay(base, over map[string]any) map[string]any {
	out := maps.Clone(base)
	if out == nil {
		out = map[string]any{}
	}
	for k, v := range over {
		if isEmpty(v) {
			continue
		}
		if om, ok := v.(map[string]any); ok {
			if bm, ok := out[k].(map[string]any); ok {
				out[k] = overlay(bm, om)
				continue
			}
		}
		out[k] = v
	}
	return out
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case float64:
		return x == 0
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// mergePatch applies an RFC 7386 merge patch to doc.
func mergePatch(doc map[string]any, patch map[string]any) map[string]any {
	out := maps.Clone(doc)
	if out == nil {
		out = map[string]any{}
	}
	for k, v := range patch {
		switch pv := v.(type) {
		case nil:
			delete(out, k)
		case map[string]any:
			dm, _ := out[k].(map[string]any)
			out[k] = mergePatch(dm, pv)
		default:
			out[k] = v
		}
	}
	return out
}
