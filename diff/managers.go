package diff

import (
	"bytes"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// ownership is what a live object's managedFields say about who owns what,
// from our field manager's point of view.
type ownership struct {
	// ours: fields our manager applied.
	ours *fieldpath.Set
	// migrated: fields of the client-side apply managers (Options.MigratedManagers).
	migrated *fieldpath.Set
	// others: fields any other manager owns.
	others *fieldpath.Set
	// honoured: the fields of others that an apply must not revert: those
	// of other appliers (server-side apply shares them) and those written
	// through a subresource (an autoscaler's replicas via scale). Fields
	// another manager took by a plain update (kubectl edit) are drift, and
	// are not honoured.
	honoured *fieldpath.Set
	// present: the object had managedFields at all.
	present bool
}

// readOwnership parses obj's managedFields for the main resource (entries
// for subresources such as status are left out; the scale subresource's
// replicas count as another manager's, which they are).
func readOwnership(obj *unstructured.Unstructured, manager string, migrated []string) (ownership, error) {
	o := ownership{ours: &fieldpath.Set{}, migrated: &fieldpath.Set{}, others: &fieldpath.Set{}, honoured: &fieldpath.Set{}}
	if obj == nil {
		return o, nil
	}
	for _, e := range obj.GetManagedFields() {
		o.present = true
		if e.Subresource == "status" || e.FieldsV1 == nil {
			continue
		}
		set, err := fieldsOf(e)
		if err != nil {
			return o, fmt.Errorf("managedFields of %q: %w", e.Manager, err)
		}
		switch {
		case e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "":
			o.ours = o.ours.Union(set)
		case slices.Contains(migrated, e.Manager) && e.Subresource == "":
			o.migrated = o.migrated.Union(set)
		default:
			o.others = o.others.Union(set)
			if e.Operation == metav1.ManagedFieldsOperationApply || e.Subresource != "" {
				o.honoured = o.honoured.Union(set)
			}
		}
	}
	return o, nil
}

// managedBy returns the union of the fields owned by the named managers.
func managedBy(obj *unstructured.Unstructured, managers []string) (*fieldpath.Set, error) {
	out := &fieldpath.Set{}
	if obj == nil {
		return out, nil
	}
	for _, e := range obj.GetManagedFields() {
		if e.FieldsV1 == nil || !slices.Contains(managers, e.Manager) {
			continue
		}
		set, err := fieldsOf(e)
		if err != nil {
			return nil, fmt.Errorf("managedFields of %q: %w", e.Manager, err)
		}
		out = out.Union(set)
	}
	return out, nil
}

func fieldsOf(e metav1.ManagedFieldsEntry) (*fieldpath.Set, error) {
	set := &fieldpath.Set{}
	if err := set.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil {
		return nil, err
	}
	return set, nil
}
