package diff

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func cronTab(cpu string, withDefaults bool) *unstructured.Unstructured {
	container := map[string]any{"name": "c", "image": "example.com/c:1", "resources": map[string]any{"limits": map[string]any{"cpu": cpu}}}
	if withDefaults {
		container["imagePullPolicy"] = "IfNotPresent"
		container["terminationMessagePath"] = "/dev/termination-log"
		container["terminationMessagePolicy"] = "File"
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "stable.example.com/v1", "kind": "CronTab",
		"metadata": map[string]any{"name": "ct", "namespace": "ns"},
		"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{container}}}},
	}}
}

// TestKnownTypeFieldsNormaliseACustomResourceField: a PodSpec inside a
// custom resource compares as a PodSpec does in a Deployment (quantities
// canonical, server defaults filled) once knownTypeFields names it, and
// not before.
func TestKnownTypeFieldsNormaliseACustomResourceField(t *testing.T) {
	desired, live := cronTab("1000m", false), cronTab("1", true)
	plain, err := New(DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	res, err := plain.Diff(context.Background(), desired, live)
	if err != nil || !res.Modified {
		t.Fatalf("without knownTypeFields: modified %v (%v), want a difference", res.Modified, err)
	}
	opts := DefaultOptions()
	opts.KnownTypeFields = []KnownTypeField{{Group: "stable.example.com", Kind: "CronTab", Field: "spec.template.spec", Type: "core/v1/PodSpec"}}
	known, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	res, err = known.Diff(context.Background(), desired, live)
	if err != nil || res.Modified {
		t.Fatalf("with knownTypeFields: modified %v (%v):\n%s", res.Modified, err, res.Text)
	}
	// A real change still shows.
	res, err = known.Diff(context.Background(), cronTab("2", false), live)
	if err != nil || !res.Modified {
		t.Fatalf("a changed quantity: modified %v (%v)", res.Modified, err)
	}
	opts.KnownTypeFields[0].Type = "core/v1/NoSuchType"
	if _, err := New(opts); err == nil || !strings.Contains(err.Error(), "core/v1/NoSuchType") {
		t.Fatalf("an unknown type: %v", err)
	}
}

// TestCompareAllStatus: status counts with CompareAllStatus, except for the
// kinds of IgnoreStatus (Argo CD's ignoreResourceStatusField none and crd).
func TestCompareAllStatus(t *testing.T) {
	obj := func(status string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "stable.example.com/v1", "kind": "CronTab",
			"metadata": map[string]any{"name": "ct", "namespace": "ns"},
			"status":   map[string]any{"phase": status},
		}}
	}
	for _, c := range []struct {
		all      bool
		ignore   bool
		modified bool
	}{{false, false, false}, {true, false, true}, {true, true, false}} {
		opts := DefaultOptions()
		opts.CompareAllStatus = c.all
		if c.ignore {
			opts.IgnoreStatus = []schema.GroupKind{{Group: "stable.example.com", Kind: "CronTab"}}
		}
		d, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		res, err := d.Diff(context.Background(), obj("Ready"), obj("Failed"))
		if err != nil || res.Modified != c.modified {
			t.Errorf("all=%v ignore=%v: modified %v (%v), want %v", c.all, c.ignore, res.Modified, err, c.modified)
		}
	}
}
