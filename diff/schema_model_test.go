package diff

import (
	"context"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

var gvkCRD = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// A kind registered into the scheme without a compiled-in model (Helm
// registers apiextensions.k8s.io into client-go's scheme) gets a deduced
// schema, not a converter that fails on every object of it.
func TestBuiltinSchemaNeedsAModelNotOnlyAGoType(t *testing.T) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	src := newBuiltinSchema(s)
	if !src.scheme.Recognizes(gvkCRD) || src.hasModel(gvkCRD) {
		t.Fatalf("CRD: recognised %v, modelled %v", src.scheme.Recognizes(gvkCRD), src.hasModel(gvkCRD))
	}
	if !src.hasModel(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}) {
		t.Fatal("Deployment has a compiled-in model")
	}
	opts := DefaultOptions()
	opts.Mode = ModeStructuredMerge
	opts.Schema = src
	d := mustDiffer(t, opts)
	crd := mustObject(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.example.com}
spec:
  group: example.com
  names: {kind: Thing, plural: things}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`)
	res, err := d.Diff(context.Background(), crd, crd.DeepCopy())
	if err != nil || res.Modified || res.SchemaFallback != "" {
		t.Fatalf("CRD in sync: %v %+v", err, res)
	}
}

// An object the kind's model cannot type (a field the compiled-in model
// lacks, as a newer server serves it) is compared with a deduced schema,
// and the result says so; it is not an error.
func TestStructuredMergeFallsBackWhenTheModelDoesNotFit(t *testing.T) {
	opts := DefaultOptions()
	opts.Mode = ModeStructuredMerge
	d := mustDiffer(t, opts)
	desired := mustObject(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ns}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`)
	live := desired.DeepCopy()
	if err := unstructured.SetNestedField(live.Object, "future", "spec", "fieldOfANewerServer"); err != nil {
		t.Fatal(err)
	}
	res, err := d.Diff(context.Background(), desired, live)
	if err != nil {
		t.Fatalf("no fallback: %v", err)
	}
	if res.Modified || !strings.Contains(res.SchemaFallback, "fieldOfANewerServer") {
		t.Fatalf("modified %v, fallback %q", res.Modified, res.SchemaFallback)
	}
	desired2 := desired.DeepCopy()
	_ = unstructured.SetNestedField(desired2.Object, int64(3), "spec", "replicas")
	res, err = d.Diff(context.Background(), desired2, live)
	if err != nil || !res.Modified || len(res.Changes) != 1 || res.Changes[0].Path != "/spec/replicas" {
		t.Fatalf("a change under the fallback: %v %+v", err, res.Changes)
	}
}

// ClusterSchema finds models for the kinds client-go has none for:
// apiextensions.k8s.io, apiregistration.k8s.io and a CRD's own kind; with
// BuiltinFirst the built-in kinds are served without reading the cluster.
func TestClusterSchemaModelsEveryServedKind(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ensureWidgetCRD(t)
	for _, builtinFirst := range []bool{false, true} {
		opts := DefaultClusterSchemaOptions()
		opts.BuiltinFirst = builtinFirst
		cs, err := NewClusterSchemaWithOptions(cluster.Config(), opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, gvk := range []schema.GroupVersionKind{
			gvkCRD,
			{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"},
			{Group: "example.com", Version: "v1", Kind: "Widget"},
		} {
			if _, err := cs.TypeConverter(ctx, gvk); err != nil {
				t.Fatal(err)
			}
			cs.mu.Lock()
			known := cs.byGV[gvk.GroupVersion()].s != nil && cs.byGV[gvk.GroupVersion()].s.known[gvk]
			cs.mu.Unlock()
			if !known {
				t.Errorf("builtinFirst %v: %s has no model from the cluster", builtinFirst, gvk)
			}
		}
		deploy := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
		if _, err := cs.TypeConverter(ctx, deploy); err != nil {
			t.Fatal(err)
		}
		cs.mu.Lock()
		_, read := cs.byGV[deploy.GroupVersion()]
		cs.mu.Unlock()
		if read == builtinFirst {
			t.Errorf("builtinFirst %v: apps/v1 read from the cluster: %v", builtinFirst, read)
		}
	}
}
