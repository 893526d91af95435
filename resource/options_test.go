package resource

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestParseOptions(t *testing.T) {
	o, err := ParseOptions(" Prune=false, ServerSideApply=true,,IgnoreExtraneous ,PrunePropagationPolicy=background")
	if err != nil {
		t.Fatal(err)
	}
	if !o.Has(OptionPrune, "false") || !o.Has(OptionPrune, "False") {
		t.Error("Prune=false not found")
	}
	if v, set := o.Bool(OptionServerSideApply); !v || !set {
		t.Error("ServerSideApply not true")
	}
	if v, set := o.Bool(OptionIgnoreExtraneous); !v || !set {
		t.Error("bare flag not true")
	}
	if v, _ := o.Get(OptionPrunePropagationPolicy); v != "background" {
		t.Errorf("policy = %q", v)
	}
	if _, set := o.Bool(OptionReplace); set {
		t.Error("absent option reported set")
	}
	if o.Len() != 4 || o.String() != "Prune=false,ServerSideApply=true,IgnoreExtraneous,PrunePropagationPolicy=background" {
		t.Errorf("String() = %q", o.String())
	}
	if _, err := ParseOptions("=true"); err == nil {
		t.Error("empty key accepted")
	}
}

func TestOptionsMergeObjectWins(t *testing.T) {
	app, _ := ParseOptions("ServerSideApply=true,Prune=true")
	obj, _ := ParseOptions("ServerSideApply=false")
	m := app.Merge(obj)
	if v, _ := m.Bool(OptionServerSideApply); v {
		t.Error("object option did not win")
	}
	if v, _ := m.Bool(OptionPrune); !v {
		t.Error("app option lost")
	}
}

func TestSyncOptionsOfNamesObjectOnError(t *testing.T) {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("v1")
	obj.SetKind("ConfigMap")
	obj.SetName("a")
	obj.SetAnnotations(map[string]string{AnnotationSyncOptions: "=x", AnnotationCompareOptions: "IgnoreExtraneous"})
	if _, err := SyncOptionsOf(obj); err == nil || err.Error() != `ConfigMap a: annotation argocd.argoproj.io/sync-options: resource: option "=x" has no key` {
		t.Errorf("err = %v", err)
	}
	c, err := CompareOptionsOf(obj)
	if err != nil || !c.Has(OptionIgnoreExtraneous, "true") {
		t.Errorf("compare options = %v, %v", c, err)
	}
}
