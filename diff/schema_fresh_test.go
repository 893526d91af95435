package diff

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
)

// A CRD created after ClusterSchema read the cluster's index is found as
// soon as the API server publishes it, not after the index's refresh: the
// diff of its objects never runs on a guessed schema for long.
func TestClusterSchemaSeesANewCRDAtOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := NewClusterSchema(cluster.Config(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.TypeConverter(ctx, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}); err != nil {
		t.Fatal(err)
	}
	group := fmt.Sprintf("fresh%d.example.com", time.Now().UnixNano())
	crd := mustObject(t, fmt.Sprintf(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.%[1]s}
spec:
  group: %[1]s
  names: {kind: Gadget, plural: gadgets}
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
              parts:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
`, group))
	data, _ := json.Marshal(crd.Object)
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dyn.Resource(crdGVR).Patch(ctx, crd.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "test"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dyn.Resource(crdGVR).Delete(context.Background(), crd.GetName(), metav1.DeleteOptions{}) })
	disco := discovery.NewDiscoveryClientForConfigOrDie(cluster.Config())
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		paths, err := disco.OpenAPIV3().Paths()
		if err != nil {
			return false, nil
		}
		gv, ok := paths["apis/"+group+"/v1"]
		if !ok {
			return false, nil
		}
		raw, err := gv.Schema("application/json")
		return err == nil && strings.Contains(string(raw), "Gadget"), nil
	})
	if err != nil {
		t.Fatalf("the CRD's model was never published: %v", err)
	}
	// From here the refresh of the index (10 s before) must not be what
	// the schema waits for: within missRefresh it reads again.
	gvk := schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Gadget"}
	published := time.Now()
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, missRefresh+2*time.Second, true, func(ctx context.Context) (bool, error) {
		if _, err := cs.TypeConverter(ctx, gvk); err != nil {
			return false, err
		}
		cs.mu.Lock()
		entry, ok := cs.byGV[gvk.GroupVersion()]
		cs.mu.Unlock()
		return ok && entry.s.known[gvk], nil
	})
	if err != nil {
		t.Fatalf("the new CRD's kind was still served from a guessed schema %v after its model was published: %v", time.Since(published), err)
	}
}
