package diff

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/resource"
)

// KeepIgnored returns the object a sync with Argo CD's
// RespectIgnoreDifferences=true option applies: desired, with every field
// that the ignore rules cover given its live value (a field the live
// object lacks is left out). The fields are found as the comparison finds
// them: JSON pointers, jq paths evaluated on each object, and
// managedFieldsManagers from live's managedFields. A nil live (an object
// still to create) or an object no rule matches returns desired itself;
// desired is never modified. Errors are *Error, naming the object.
func (d *Differ) KeepIgnored(ctx context.Context, desired, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if desired == nil || live == nil {
		return desired, nil
	}
	var sc *scrubber
	if isSecret(desired) || isSecret(live) {
		sc = d.mask.newScrubber(desired, live)
	}
	key := keyOf(desired, live)
	gvk := desired.GroupVersionKind()
	out := deepCopyMap(desired.Object)
	matched, err := d.ignore(ctx, key, gvk, live, out, nil)
	if err != nil {
		return nil, wrapError(key, err, sc)
	}
	if !matched {
		return desired, nil
	}
	var kept []removedField
	if _, err := d.ignore(ctx, key, gvk, live, deepCopyMap(live.Object), &kept); err != nil {
		return nil, wrapError(key, err, sc)
	}
	for _, r := range kept {
		ensureParents(out, live.Object, r.path)
		if !restore(out, r.path, deepCopyValue(r.value)) {
			return nil, wrapError(key, fmt.Errorf("cannot keep the live value of ignored field %s: its parent is not an object or list in the desired object", joinPointer(r.path)), sc)
		}
	}
	return &unstructured.Unstructured{Object: out}, nil
}

// ensureParents creates, in obj, the maps on the way to p that live has as
// maps and obj lacks, so that a live value can be put back where desired
// sets nothing above it.
func ensureParents(obj, live map[string]any, p fieldPath) {
	var cur any = obj
	var lcur any = live
	for _, tok := range p[:len(p)-1] {
		m, ok := cur.(map[string]any)
		if !ok {
			if l, isList := cur.([]any); isList {
				next, found := lookup(l, fieldPath{tok})
				lnext, _ := lookup(lcur, fieldPath{tok})
				if !found {
					return
				}
				cur, lcur = next, lnext
				continue
			}
			return
		}
		lm, _ := lcur.(map[string]any)
		next, found := m[tok]
		if !found {
			if _, liveMap := lm[tok].(map[string]any); !liveMap {
				return
			}
			next = map[string]any{}
			m[tok] = next
		}
		cur, lcur = next, lm[tok]
	}
}

// resetIgnored returns the pointers of the ignored fields that desired sets
// to a value the live object does not hold: a sync that applies the whole
// desired object (without RespectIgnoreDifferences=true) writes them.
// desiredRemoved and liveRemoved are what the ignore rules took out of the
// normalised desired and live objects.
func resetIgnored(desiredRemoved, liveRemoved []removedField) []string {
	live := make(map[string]any, len(liveRemoved))
	for _, r := range liveRemoved {
		live[joinPointer(r.path)] = r.value
	}
	var out []string
	seen := map[string]bool{}
	for _, r := range desiredRemoved {
		p := joinPointer(r.path)
		if seen[p] {
			continue
		}
		seen[p] = true
		if lv, ok := live[p]; !ok || !reflect.DeepEqual(lv, r.value) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// respectsIgnored reports whether the application's sync keeps ignored
// fields at their live values (RespectIgnoreDifferences=true).
func (d *Differ) respectsIgnored() bool {
	return d.opts.SyncOptions.Has(resource.OptionRespectIgnoreDifferences, "true")
}

// resetNote is the line Result.Text ends with when a sync of the object
// writes ignored fields.
func resetNote(paths []string) string {
	return fmt.Sprintf("# note: ignored field(s) %s differ from Git, and a sync applies Git's value to them (sync option RespectIgnoreDifferences=true keeps their live values)\n", strings.Join(paths, ", "))
}
