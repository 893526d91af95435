package diff

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	gresource "github.com/kubegitops/gitops/resource"
)

// minScrubLen is the shortest secret value searched for in free text
// (annotations, errors, paths). Shorter values would match everywhere and
// carry next to no information; the data fields themselves are masked
// whatever their length.
const minScrubLen = 3

// masker turns secret values into stable placeholders: the same value gives
// the same placeholder (within one Differ), different values give
// different ones, and a placeholder reveals nothing: it is a keyed hash
// with a key drawn when the Differ is built.
type masker struct {
	key []byte
}

// placeholder returns the placeholder of a Secret data value (base64 text).
func (m *masker) placeholder(value string) string {
	h := hmac.New(sha256.New, m.key)
	h.Write([]byte(value))
	return "+masked-" + hex.EncodeToString(h.Sum(nil)[:6]) + "+"
}

// scrubber masks the values of the Secrets in one diff, wherever they
// appear: in data, in other fields, in text and in errors.
type scrubber struct {
	m *masker
	// needles are the texts to hide (base64 and plaintext forms), longest
	// first so that a value is replaced before any of its parts.
	needles      []string
	placeholders []string
}

// newScrubber collects the values of every Secret among objs: data (and its
// decoded plaintext), stringData (and its base64 form), and both again in
// the last-applied annotation.
func (m *masker) newScrubber(objs ...*unstructured.Unstructured) *scrubber {
	s := &scrubber{m: m}
	seen := map[string]bool{}
	addEncoded := func(enc string) {
		if enc == "" || seen[enc] {
			return
		}
		seen[enc] = true
		ph := m.placeholder(enc)
		s.needles = append(s.needles, enc)
		s.placeholders = append(s.placeholders, ph)
		if plain, err := base64.StdEncoding.DecodeString(enc); err == nil && len(plain) > 0 && !seen[string(plain)] {
			seen[string(plain)] = true
			s.needles = append(s.needles, string(plain))
			s.placeholders = append(s.placeholders, ph)
		}
	}
	var collect func(obj map[string]any)
	collect = func(obj map[string]any) {
		if data, ok := obj["data"].(map[string]any); ok {
			for _, v := range data {
				if str, ok := v.(string); ok {
					addEncoded(str)
				}
			}
		}
		if sd, ok := obj["stringData"].(map[string]any); ok {
			for _, v := range sd {
				if str, ok := v.(string); ok && str != "" {
					addEncoded(base64.StdEncoding.EncodeToString([]byte(str)))
				}
			}
		}
		if meta, ok := obj["metadata"].(map[string]any); ok {
			if anns, ok := meta["annotations"].(map[string]any); ok {
				if raw, ok := anns[gresource.AnnotationLastApplied].(string); ok {
					var last map[string]any
					if json.Unmarshal([]byte(raw), &last) == nil {
						collect(last)
					}
				}
			}
		}
	}
	for _, o := range objs {
		if o != nil {
			collect(o.Object)
		}
	}
	// Longest first; equal lengths in a fixed order.
	idx := make([]int, len(s.needles))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return len(s.needles[idx[a]]) > len(s.needles[idx[b]]) })
	needles, phs := make([]string, len(idx)), make([]string, len(idx))
	for i, j := range idx {
		needles[i], phs[i] = s.needles[j], s.placeholders[j]
	}
	s.needles, s.placeholders = needles, phs
	return s
}

// text replaces every secret value in str by its placeholder.
func (s *scrubber) text(str string) string {
	if s == nil {
		return str
	}
	for i, n := range s.needles {
		if len(n) >= minScrubLen && strings.Contains(str, n) {
			str = strings.ReplaceAll(str, n, s.placeholders[i])
		}
	}
	return str
}

// object masks a normalised Secret in place: every data value becomes its
// placeholder, and any other string holding a secret value is scrubbed.
func (s *scrubber) object(obj map[string]any) {
	if obj == nil {
		return
	}
	for _, field := range [...]string{"data", "stringData"} {
		if data, ok := obj[field].(map[string]any); ok {
			for k, v := range data {
				if str, ok := v.(string); ok {
					if field == "stringData" {
						str = base64.StdEncoding.EncodeToString([]byte(str))
					}
					data[k] = s.m.placeholder(str)
				}
			}
		}
	}
	for k, v := range obj {
		if k == "data" || k == "stringData" {
			continue
		}
		obj[k] = s.value(v)
	}
}

func (s *scrubber) value(v any) any {
	switch x := v.(type) {
	case string:
		return s.text(x)
	case map[string]any:
		for k, c := range x {
			x[k] = s.value(c)
		}
	case []any:
		for i, c := range x {
			x[i] = s.value(c)
		}
	}
	return v
}
