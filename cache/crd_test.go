package cache

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/resource"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

func widget(apiVersion, ns, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": "Widget",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"size": int64(3)},
	}}
}

func TestCRDCreatedAtRunTimeIsWatched(t *testing.T) {
	_, dyn := clients(t, cluster.Config())
	ns := cluster.TestNamespace(t)
	c := startCache(t, cluster.Config(), nil)
	before := c.Stats().Watches

	// A discovery that finds nothing new does not count: what is derived
	// per generation stays valid. (Other packages' tests may add kinds to
	// the shared cluster at any moment, so one of a few quiet discoveries
	// must leave the count where it was.)
	quiet := false
	for range 5 {
		g := c.APIResourcesGeneration()
		if _, err := c.refresh(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		if c.APIResourcesGeneration() == g {
			quiet = true
			break
		}
	}
	if !quiet {
		t.Fatal("every discovery moved APIResourcesGeneration, also those that found nothing new")
	}
	gen := c.APIResourcesGeneration()

	testfiles.InstallCRD(t, cluster.Config(), testfiles.WidgetCRD("runtime.cache.test"))
	gvr := schema.GroupVersionResource{Group: "runtime.cache.test", Version: "v1", Resource: "widgets"}
	if _, err := dyn.Resource(gvr).Namespace(ns).Create(testCtx(t), widget("runtime.cache.test/v1", ns, "w1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	key := resource.Key{Group: "runtime.cache.test", Kind: "Widget", Namespace: ns, Name: "w1"}
	waitFor(t, 30*time.Second, "custom object cached", func() bool { _, ok := c.Get(key); return ok })
	if after := c.Stats().Watches; after != before+1 {
		t.Errorf("watches %d -> %d, want one more", before, after)
	}
	found := false
	for _, l := range c.APIResources() {
		found = found || l.GroupVersion == "runtime.cache.test/v1"
	}
	if !found {
		t.Error("discovery not refreshed: APIResources lacks runtime.cache.test/v1")
	}
	if c.APIResourcesGeneration() <= gen {
		t.Errorf("the discovery that found the new kind did not count: generation %d -> %d", gen, c.APIResourcesGeneration())
	}
	// The CRD itself is kept whole (its schema drives discovery and diffs).
	crd, ok := c.Get(resource.Key{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "widgets.runtime.cache.test"})
	if !ok || crd.Object["spec"] == nil {
		t.Error("CRD not cached whole")
	}

	// Deleting the CRD stops the watch and forgets its objects.
	if err := dyn.Resource(crdGVR).Delete(testCtx(t), "widgets.runtime.cache.test", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "watch stopped after CRD deletion", func() bool {
		_, ok := c.Get(key)
		return !ok && c.Stats().Watches == before
	})
}

// A CRD serves v1 (storage) and v2 through a conversion webhook that points
// at a Service that does not exist. Objects stored as v1 can only be listed
// as v2 through the webhook, so the preferred version v2 fails to list: that
// kind alone is tainted, and everything else is served.
func TestBrokenConversionWebhookTaintsOnlyThatKind(t *testing.T) {
	const group = "broken.cache.test"
	cs, dyn := clients(t, cluster.Config())
	ns := cluster.TestNamespace(t)
	// The Widget CRD's versions end its manifest: v2 and the conversion
	// follow them.
	testfiles.InstallCRD(t, cluster.Config(), testfiles.WidgetCRD(group)+`  - name: v2
    served: true
    storage: false
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: ["v1"]
      clientConfig:
        service: {namespace: default, name: nowhere, path: /convert, port: 443}
`)
	v1 := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	if _, err := dyn.Resource(v1).Namespace(ns).Create(testCtx(t), widget(group+"/v1", ns, "w1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = dyn.Resource(v1).Namespace(ns).Delete(ctx, "w1", metav1.DeleteOptions{})
	})
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(testCtx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "healthy"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	c := startCache(t, cluster.Config(), nil)
	tainted := c.Tainted()
	want := schema.GroupVersionKind{Group: group, Version: "v2", Kind: "Widget"}
	err, ok := tainted[want]
	if !ok {
		t.Fatalf("%v not tainted; tainted = %v", want, tainted)
	}
	var ke *KindError
	if !errors.As(err, &ke) || ke.Reason != ReasonListFailed || !strings.Contains(err.Error(), "conversion webhook") {
		t.Errorf("taint error = %v", err)
	}
	for gvk, e := range tainted {
		if gvk != want {
			t.Errorf("unrelated kind tainted: %v", e)
		}
	}
	if _, ok := c.Get(cmKey(ns, "healthy")); !ok {
		t.Error("healthy kind not served next to the broken one")
	}
	// Other kinds keep being watched.
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(testCtx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "later"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "later ConfigMap cached", func() bool { _, ok := c.Get(cmKey(ns, "later")); return ok })
}

// An APIService whose backend does not exist: its group fails discovery and
// is reported, the rest keeps serving, and deleting the APIService clears
// the report, both through the APIService events.
func TestUnavailableAPIServiceTaintsItsGroup(t *testing.T) {
	_, dyn := clients(t, cluster.Config())
	c := startCache(t, cluster.Config(), nil)
	apiServices := schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	svc := fromYAML(t, `
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1alpha1.nowhere.cache.test
spec:
  group: nowhere.cache.test
  version: v1alpha1
  groupPriorityMinimum: 1000
  versionPriority: 15
  insecureSkipTLSVerify: true
  service: {namespace: default, name: nowhere, port: 443}
`)
	if _, err := dyn.Resource(apiServices).Create(testCtx(t), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := false
	t.Cleanup(func() {
		if !deleted {
			_ = dyn.Resource(apiServices).Delete(context.Background(), svc.GetName(), metav1.DeleteOptions{})
		}
	})
	gv := schema.GroupVersionKind{Group: "nowhere.cache.test", Version: "v1alpha1"}
	waitFor(t, 60*time.Second, "unavailable group reported", func() bool {
		err, ok := c.Tainted()[gv]
		var ke *KindError
		return ok && errors.As(err, &ke) && ke.Reason == ReasonDiscoveryFailed
	})
	for gvk := range c.Tainted() {
		// broken.cache.test is TestBrokenConversionWebhookTaintsOnlyThatKind's
		// deliberately broken CRD, which may still be being deleted.
		if gvk != gv && gvk.Group != "broken.cache.test" {
			t.Errorf("unrelated kind tainted: %v", gvk)
		}
	}
	if err := dyn.Resource(apiServices).Delete(testCtx(t), svc.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted = true
	waitFor(t, 60*time.Second, "report cleared after the APIService was deleted", func() bool { _, still := c.Tainted()[gv]; return !still })
}
