package sync

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/kubegitops/gitops/resource"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ImmutableFieldError reports an update the API server refused because it
// changes fields that cannot change after creation. Fields names them (in
// the API server's notation, such as spec.clusterIPs[0]; empty when the
// server named none and no known immutable field of the kind changed).
type ImmutableFieldError struct {
	// Key names the object the API server refused to update.
	Key resource.Key
	// Fields are the immutable fields the update changes.
	Fields []string
	// Err is the API server's error.
	Err error
}

// Error implements error. It names the fields and the options that
// re-create the object.
func (e *ImmutableFieldError) Error() string {
	fields := strings.Join(e.Fields, ", ")
	if fields == "" {
		fields = "(not named by the API server)"
	}
	// The API error is left out: it quotes the whole refused value.
	return fmt.Sprintf("%s: immutable field(s) %s cannot change after creation; "+
		"the sync option Force=true (on the object or the app, also with Replace=true) or the RecreateOnImmutable policy deletes and re-creates the object",
		e.Key, fields)
}

// Unwrap returns the API error.
func (e *ImmutableFieldError) Unwrap() error { return e.Err }

// immutableKnown lists, per kind, the fields that cannot change after
// creation (dotted, as the API server names fields).
var immutableKnown = map[schema.GroupKind][]string{
	{Kind: "Service"}:                                                {"spec.clusterIP", "spec.clusterIPs"},
	{Kind: "PersistentVolumeClaim"}:                                  {"spec.accessModes", "spec.selector", "spec.storageClassName", "spec.volumeName", "spec.volumeMode", "spec.dataSource", "spec.dataSourceRef"},
	{Group: "apps", Kind: "Deployment"}:                              {"spec.selector"},
	{Group: "apps", Kind: "ReplicaSet"}:                              {"spec.selector"},
	{Group: "apps", Kind: "DaemonSet"}:                               {"spec.selector"},
	{Group: "apps", Kind: "StatefulSet"}:                             {"spec.selector", "spec.serviceName", "spec.podManagementPolicy", "spec.volumeClaimTemplates"},
	{Group: "batch", Kind: "Job"}:                                    {"spec.selector", "spec.template", "spec.completionMode"},
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:        {"roleRef"},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: {"roleRef"},
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                  {"provisioner", "parameters", "reclaimPolicy", "volumeBindingMode"},
}

// immutablePhrases are the words the API server's validation uses for a
// field that cannot change (apimachinery's FieldImmutableErrorMsg "field is
// immutable", Service's "may not change once set", RoleBinding's "cannot
// change roleRef", Pod's "may not change fields other than", ...).
var immutablePhrases = []string{"immutable", "may not change", "may not be changed", "cannot change", "cannot be changed", "can not be changed"}

// immutableFields classifies err, the API server's answer to a write of
// desired over live (either may be nil), by these rules:
//
//   - only an Invalid (422) status counts: admission denials and conflicts
//     are not about immutability;
//   - a cause of type FieldValueInvalid or FieldValueForbidden is an
//     immutability refusal when its message holds an immutability phrase,
//     or when its field is (or lies under) a known immutable field of the
//     kind whose desired value the live object does not hold, or when it is
//     Forbidden and lies above such a changed field (StatefulSet's "spec:
//     Forbidden: updates to statefulset spec for fields other than ...");
//   - the fields named are the cause's, or, for a cause above the changed
//     known fields (such as "spec"), those fields;
//   - a status without causes counts when its message holds an
//     immutability phrase; it names the changed known fields.
//
// ok is false when err is not an immutability refusal.
func immutableFields(err error, gk schema.GroupKind, desired, live *unstructured.Unstructured) (fields []string, ok bool) {
	var status apierrors.APIStatus
	if err == nil || !errors.As(err, &status) || !apierrors.IsInvalid(err) {
		return nil, false
	}
	changed := changedKnown(gk, desired, live)
	details := status.Status().Details
	if details == nil || len(details.Causes) == 0 {
		if !hasImmutablePhrase(status.Status().Message) {
			return nil, false
		}
		return changed, true
	}
	set := map[string]bool{}
	for _, c := range details.Causes {
		if c.Type != metav1.CauseTypeFieldValueInvalid && c.Type != metav1.CauseTypeForbidden {
			continue
		}
		var below []string
		atChanged := false
		for _, k := range changed {
			if under(k, c.Field) && k != c.Field {
				below = append(below, k)
			}
			if under(c.Field, k) {
				atChanged = true
			}
		}
		phrase := hasImmutablePhrase(c.Message)
		switch {
		case (phrase || c.Type == metav1.CauseTypeForbidden) && len(below) > 0:
			for _, k := range below {
				set[k] = true
			}
		case phrase || atChanged:
			set[c.Field] = true
		}
	}
	if len(set) == 0 {
		return nil, false
	}
	for f := range set {
		if f != "" {
			fields = append(fields, f)
		}
	}
	sort.Strings(fields)
	return fields, true
}

// hasImmutablePhrase reports whether msg says a field cannot change.
func hasImmutablePhrase(msg string) bool {
	msg = strings.ToLower(msg)
	for _, p := range immutablePhrases {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// under reports whether field is parent or lies below it (a nested field
// or a list item); every field lies under "".
func under(field, parent string) bool {
	return parent == "" || field == parent || strings.HasPrefix(field, parent+".") || strings.HasPrefix(field, parent+"[")
}

// changedKnown returns the known immutable fields of gk that desired sets
// to a value the live object does not hold (server defaults inside live
// do not count), sorted.
func changedKnown(gk schema.GroupKind, desired, live *unstructured.Unstructured) []string {
	if desired == nil || live == nil {
		return nil
	}
	var out []string
	for _, f := range immutableKnown[gk] {
		path := strings.Split(f, ".")
		d, found, _ := unstructured.NestedFieldNoCopy(desired.Object, path...)
		if !found {
			continue
		}
		l, _, _ := unstructured.NestedFieldNoCopy(live.Object, path...)
		if !contained(d, l) {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// contained reports whether live holds every value desired sets: maps key
// by key, lists item by item (same length), numbers by value.
func contained(desired, live any) bool {
	switch d := desired.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return len(d) == 0 && live == nil
		}
		for k, v := range d {
			if !contained(v, l[k]) {
				return false
			}
		}
		return true
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(d) {
			return len(d) == 0 && live == nil
		}
		for i := range d {
			if !contained(d[i], l[i]) {
				return false
			}
		}
		return true
	}
	return resource.ValuesEqual(desired, live)
}
