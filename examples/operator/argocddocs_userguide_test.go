package main

import (
	"bytes"
	"context"
	"sort"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/examples/operator/config"
	"github.com/kubegitops/gitops/internal/argodocs"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// TestArgoCDUserGuideManifestsStoredWhole: every whole Application,
// AppProject and ApplicationSet of the YAML blocks of the release's
// docs/user-guide pages (read at test time from its Markdown), as it is,
// loads with this module's loaders (no field refused) and, applied to
// the local cluster under the operator's CRDs, is stored whole: no field
// of it is pruned by the schemas the operator installs (which are
// generated from the types the operator reads), so nothing a user writes
// is dropped unseen. Only the namespace changes, to the test's.
func TestArgoCDUserGuideManifestsStoredWhole(t *testing.T) {
	rel := argodocs.ForTest(t)
	manifests := userGuideManifests(t, rel)
	if len(manifests) < 15 {
		t.Fatalf("only %d whole manifests in docs/user-guide of %s", len(manifests), rel.Version())
	}
	keys := make([]string, 0, len(manifests))
	for k := range manifests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ctx := context.Background()
	c := newArgoClient(t, cluster.Config())
	waitUntil(t, func() string { return "install the operator's CRDs" }, func(ctx context.Context) bool {
		return config.Install(ctx, c, time.Minute) == nil
	})
	ns := cluster.TestNamespace(t)
	for _, key := range keys {
		o := manifests[key]
		raw, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		switch o.GetKind() {
		case v1alpha1.ApplicationKind:
			_, err = v1alpha1.LoadApplications(bytes.NewReader(raw))
		case v1alpha1.AppProjectKind:
			_, err = v1alpha1.LoadProjects(bytes.NewReader(raw))
		default:
			_, err = v1alpha1.LoadApplicationSets(bytes.NewReader(raw))
		}
		if err != nil {
			t.Errorf("%s (%s %s) does not load: %v", key, o.GetKind(), o.GetName(), err)
		}

		applied := o.DeepCopy()
		applied.SetNamespace(ns)
		if err := c.Create(ctx, applied.DeepCopy()); err != nil {
			t.Errorf("%s (%s %s): the API server refuses it: %v", key, o.GetKind(), o.GetName(), err)
			continue
		}
		stored := &unstructured.Unstructured{}
		stored.SetGroupVersionKind(o.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(applied), stored); err != nil {
			t.Fatal(err)
		}
		spec, _ := o.Object["spec"].(map[string]any)
		storedSpec, _ := stored.Object["spec"].(map[string]any)
		if lost := lostFields(spec, storedSpec); len(lost) > 0 {
			t.Errorf("%s (%s %s): fields lost when stored: spec%v", key, o.GetKind(), o.GetName(), lost)
		}
		// Pages reuse names: each is removed before the next.
		stored.SetFinalizers(nil)
		if err := c.Update(ctx, stored); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, stored); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		waitUntil(t, func() string { return key + " deleted" }, func(ctx context.Context) bool {
			return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(applied), stored.DeepCopy()))
		})
	}
	t.Logf("%d whole manifests of %s's user guide", len(keys), rel.Version())
}
