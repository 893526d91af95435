package sync

import (
	"context"

	"github.com/kubegitops/gitops/diff"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DifferInSync adapts a diff.Differ to Collaborators.InSync: an object is in sync
// when the differ finds nothing to change. Sync status, the diff a person
// sees and what a sync skips then all come from the same normalisation.
func DifferInSync(d interface {
	Diff(ctx context.Context, desired, live *unstructured.Unstructured) (diff.Result, error)
}) func(ctx context.Context, desired, live *unstructured.Unstructured) (bool, error) {
	return func(ctx context.Context, desired, live *unstructured.Unstructured) (bool, error) {
		res, err := d.Diff(ctx, desired, live)
		if err != nil {
			return false, err
		}
		return !res.Modified, nil
	}
}
