package testfiles

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// WidgetCRD is the test suites' one custom resource definition: kind
// Widget (plural widgets, namespaced) of group, named widgets.<group>,
// served and stored as v1. Its schema types spec.color and spec.size, sets
// defaults (size 3, mode "fast") and keys spec.ports by name (a map list
// whose items default protocol to TCP), so a comparison needs the CRD's
// own schema to merge it. The list of versions ends the manifest, so a
// test may append versions (and then spec.conversion) to it.
func WidgetCRD(group string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.%[1]s}
spec:
  group: %[1]s
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              color: {type: string}
              size: {type: integer, default: 3}
              mode: {type: string, default: fast}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: integer}
                    protocol: {type: string, default: TCP}
`, group)
}

// crdResource is where CustomResourceDefinitions are served.
var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// InstallCRD applies the CustomResourceDefinition manifest (YAML) on the
// cluster of cfg, waits until it is ready to use (see EnsureCRD) and
// deletes it, with its objects, when the test ends. A test that installs
// a CRD of a group of its own uses it.
func InstallCRD(t testing.TB, cfg *rest.Config, manifest string) *unstructured.Unstructured {
	t.Helper()
	crd := EnsureCRD(t, cfg, manifest)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		dyn, err := dynamic.NewForConfig(cfg)
		if err != nil {
			t.Error(err)
			return
		}
		if err := dyn.Resource(crdResource).Delete(ctx, crd.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete CRD %s: %v", crd.GetName(), err)
		}
	})
	return crd
}

// EnsureCRD server-side applies the CustomResourceDefinition manifest
// (YAML) on the cluster of cfg and waits until it is ready to use: it is
// Established, discovery serves each of its served versions, and the API
// server publishes each version's OpenAPI v3 model (a comparison reads its
// schema there). The CRD stays after the test, so the tests of one package
// may share it; applying it again changes nothing. The test fails on any
// error or after a minute.
func EnsureCRD(t testing.TB, cfg *rest.Config, manifest string) *unstructured.Unstructured {
	t.Helper()
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &crd.Object); err != nil {
		t.Fatalf("CRD manifest: %v", err)
	}
	if crd.GetKind() != "CustomResourceDefinition" || crd.GetName() == "" {
		t.Fatalf("CRD manifest: kind %q named %q, want a named CustomResourceDefinition", crd.GetKind(), crd.GetName())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(crd.Object)
	if err != nil {
		t.Fatal(err)
	}
	force := true
	if _, err := dyn.Resource(crdResource).Patch(ctx, crd.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "testfiles", Force: &force}); err != nil {
		t.Fatalf("apply CRD %s: %v", crd.GetName(), err)
	}
	if err := waitCRDReady(ctx, cfg, dyn, crd); err != nil {
		t.Fatalf("CRD %s not ready: %v", crd.GetName(), err)
	}
	return crd
}

// waitCRDReady waits until crd is Established and each served version is
// in discovery and has its OpenAPI v3 model published.
func waitCRDReady(ctx context.Context, cfg *rest.Config, dyn dynamic.Interface, crd *unstructured.Unstructured) error {
	poll := func(what string, cond func(context.Context) bool) error {
		err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			return cond(ctx), nil
		})
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		return nil
	}
	err := poll("Established", func(ctx context.Context) bool {
		got, err := dyn.Resource(crdResource).Get(ctx, crd.GetName(), metav1.GetOptions{})
		if err != nil {
			return false
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		return slices.ContainsFunc(conds, func(c any) bool {
			m, _ := c.(map[string]any)
			return m["type"] == "Established" && m["status"] == "True"
		})
	})
	if err != nil {
		return err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		m, _ := v.(map[string]any)
		version, _ := m["name"].(string)
		if served, _ := m["served"].(bool); !served {
			continue
		}
		gv := group + "/" + version
		if err := poll("discovery of "+gv, func(context.Context) bool {
			list, err := disco.ServerResourcesForGroupVersion(gv)
			return err == nil && slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == plural })
		}); err != nil {
			return err
		}
		// The model is named by the reversed group, the version and the kind
		// (com.example.v1.Widget).
		parts := strings.Split(group, ".")
		slices.Reverse(parts)
		model := strings.Join(parts, ".") + "." + version + "." + kind
		if err := poll("the OpenAPI model "+model, func(context.Context) bool {
			paths, err := disco.OpenAPIV3().Paths()
			if err != nil {
				return false
			}
			doc, ok := paths["apis/"+gv]
			if !ok {
				return false
			}
			raw, err := doc.Schema("application/json")
			return err == nil && strings.Contains(string(raw), model)
		}); err != nil {
			return err
		}
	}
	return nil
}
