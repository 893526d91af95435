package notify

import (
	"regexp"
	"sort"
	"strings"
)

// secretRef matches a "$key" reference to argocd-notifications-secret, as
// Argo CD writes them in service configurations ("token: $slack-token").
var secretRef = regexp.MustCompile(`\$[A-Za-z0-9_.\-]+`)

// resolveSecrets replaces every "$key" in every string of v (the decoded
// YAML of one service) with the secret's value. A reference to a key the
// secret does not have is a MissingSecretError.
func resolveSecrets(service string, v any, secret map[string]string) (any, error) {
	switch t := v.(type) {
	case string:
		var missing error
		out := secretRef.ReplaceAllStringFunc(t, func(ref string) string {
			val, ok := secret[ref[1:]]
			if !ok {
				if missing == nil {
					missing = &MissingSecretError{Service: service, Key: ref[1:]}
				}
				return ref
			}
			return val
		})
		return out, missing
	case map[string]any:
		out := make(map[string]any, len(t))
		for _, k := range sortedKeys(t) { // the first missing key is always the same
			r, err := resolveSecrets(service, t[k], secret)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			r, err := resolveSecrets(service, e, secret)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return v, nil
}

// redactor replaces the values of the secret in text, so that no error,
// log line or metric label carries one.
type redactor struct{ r *strings.Replacer }

func newRedactor(secret map[string]string) redactor {
	vals := make([]string, 0, len(secret))
	for _, v := range secret {
		if len(v) >= 3 { // shorter values would mask ordinary text
			vals = append(vals, v)
		}
	}
	// Longest first, so that a value containing another is masked whole.
	sort.Slice(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
	pairs := make([]string, 0, 2*len(vals))
	for _, v := range vals {
		pairs = append(pairs, v, "*****")
	}
	return redactor{strings.NewReplacer(pairs...)}
}

// String returns s with every secret value replaced.
func (r redactor) String(s string) string {
	if r.r == nil {
		return s
	}
	return r.r.Replace(s)
}
