package resource

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Well-known sync options (annotation argocd.argoproj.io/sync-options or an
// application's syncOptions) and compare options (annotation
// argocd.argoproj.io/compare-options), by their keys.
const (
	OptionPrune                       = "Prune"                       // false | confirm
	OptionDelete                      = "Delete"                      // false | confirm
	OptionPruneLast                   = "PruneLast"                   // true
	OptionReplace                     = "Replace"                     // true | false
	OptionForce                       = "Force"                       // true
	OptionServerSideApply             = "ServerSideApply"             // true | false
	OptionApplyOutOfSyncOnly          = "ApplyOutOfSyncOnly"          // true | false
	OptionValidate                    = "Validate"                    // false
	OptionSkipDryRunOnMissingResource = "SkipDryRunOnMissingResource" // true
	OptionClientSideApplyMigration    = "ClientSideApplyMigration"    // true | false
	OptionCreateNamespace             = "CreateNamespace"             // true
	OptionPrunePropagationPolicy      = "PrunePropagationPolicy"      // foreground | background | orphan
	OptionRespectIgnoreDifferences    = "RespectIgnoreDifferences"    // true
	OptionFailOnSharedResource        = "FailOnSharedResource"        // true
	OptionIgnoreExtraneous            = "IgnoreExtraneous"            // bare flag
	OptionServerSideDiff              = "ServerSideDiff"              // true | false
	OptionIncludeMutationWebhook      = "IncludeMutationWebhook"      // true
)

// Options are parsed CSV options: "Key=Value" pairs and bare flags ("Key"),
// kept in the order written. Keys are case-sensitive as in Argo CD; a later
// entry for the same key wins.
type Options struct {
	entries []optionEntry
}

type optionEntry struct {
	key, value string
	bare       bool
}

// ParseOptions reads options in Argo CD's CSV form, for example
// "Prune=false, ServerSideApply=true,IgnoreExtraneous". White space around
// entries is ignored, as are empty entries. An entry with an empty key is an
// error.
func ParseOptions(csv string) (Options, error) {
	var o Options
	for _, raw := range strings.Split(csv, ",") {
		entry := strings.TrimSpace(raw)
		if entry == "" {
			continue
		}
		k, v, hasValue := strings.Cut(entry, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if k == "" {
			return Options{}, fmt.Errorf("resource: option %q has no key", entry)
		}
		o.entries = append(o.entries, optionEntry{key: k, value: v, bare: !hasValue})
	}
	return o, nil
}

// SyncOptionsOf parses obj's sync-options annotation.
func SyncOptionsOf(obj *unstructured.Unstructured) (Options, error) {
	return optionsAnnotation(obj, AnnotationSyncOptions)
}

// CompareOptionsOf parses obj's compare-options annotation.
func CompareOptionsOf(obj *unstructured.Unstructured) (Options, error) {
	return optionsAnnotation(obj, AnnotationCompareOptions)
}

func optionsAnnotation(obj *unstructured.Unstructured, key string) (Options, error) {
	o, err := ParseOptions(obj.GetAnnotations()[key])
	if err != nil {
		return Options{}, fmt.Errorf("%s: annotation %s: %w", KeyOf(obj), key, err)
	}
	return o, nil
}

// Get returns the value of key and whether it was set. A bare flag has the
// value "true".
func (o Options) Get(key string) (string, bool) {
	for i := len(o.entries) - 1; i >= 0; i-- {
		if e := o.entries[i]; e.key == key {
			if e.bare {
				return "true", true
			}
			return e.value, true
		}
	}
	return "", false
}

// Has reports whether key is set to value (compared case-insensitively, so
// "Prune=False" counts as Prune=false).
func (o Options) Has(key, value string) bool {
	v, ok := o.Get(key)
	return ok && strings.EqualFold(v, value)
}

// Bool returns the boolean value of key: set is false when the key is absent
// or its value is neither true nor false.
func (o Options) Bool(key string) (value, set bool) {
	v, ok := o.Get(key)
	switch {
	case !ok:
		return false, false
	case strings.EqualFold(v, "true"):
		return true, true
	case strings.EqualFold(v, "false"):
		return false, true
	}
	return false, false
}

// Merge returns o with the entries of over added after its own, so that over
// wins where both set a key: Merge(appOptions, objectOptions) gives the
// object's view, as in Argo CD where a resource's annotation beats the app.
func (o Options) Merge(over Options) Options {
	out := make([]optionEntry, 0, len(o.entries)+len(over.entries))
	out = append(out, o.entries...)
	return Options{entries: append(out, over.entries...)}
}

// Len returns the number of entries.
func (o Options) Len() int { return len(o.entries) }

// String writes the options back in CSV form.
func (o Options) String() string {
	parts := make([]string, len(o.entries))
	for i, e := range o.entries {
		if e.bare {
			parts[i] = e.key
		} else {
			parts[i] = e.key + "=" + e.value
		}
	}
	return strings.Join(parts, ",")
}
