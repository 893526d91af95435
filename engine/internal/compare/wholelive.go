package compare

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/resource"
)

// wholeLive returns the live object a desired object is compared with:
// live itself when the cache holds it whole (every object the engine
// tracks), else, for the lean stand-in of an object no app of this engine
// tracks yet (created by another writer, to be adopted by a sync), the
// whole object read from the API server, as Argo CD reads the full live
// object of an untracked target. Compared with the stand-in, every desired
// field would look missing. Without dest.Fetch the stand-in is used.
func wholeLive(ctx context.Context, dest Destination, live *unstructured.Unstructured, key resource.Key) (*unstructured.Unstructured, error) {
	if live == nil || dest.Fetch == nil || !cache.IsLean(live) {
		return live, nil
	}
	return dest.Fetch(ctx, live.GroupVersionKind(), key)
}
