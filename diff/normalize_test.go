package diff

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegitops/gitops/resource"
)

// TestNormalizeRules checks each normalisation rule on hand-written pairs
// that must compare equal, and one that must not, for each.
func TestNormalizeRules(t *testing.T) {
	cases := []struct {
		name          string
		desired, live string
		equal         bool
	}{
		{"quantity number vs milli", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i:1","resources":{"limits":{"cpu":0.5}}}]}}`,
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i:1","resources":{"limits":{"cpu":"500m"}}}]}}`, true},
		{"quantity 12000m vs 12", `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q"},"spec":{"hard":{"cpu":"12000m"}}}`,
			`{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q"},"spec":{"hard":{"cpu":"12"}}}`, true},
		{"quantity 1000M vs 1G", `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q"},"spec":{"hard":{"memory":"1000M"}}}`,
			`{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q"},"spec":{"hard":{"memory":"1G"}}}`, true},
		{"quantity really different", `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q"},"spec":{"hard":{"memory":"1Gi"}}}`,
			`{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q"},"spec":{"hard":{"memory":"1G"}}}`, false},
		{"int-or-string digits", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"ports":[{"port":80,"targetPort":"8080"}]}}`,
			`{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"ports":[{"port":80,"targetPort":8080,"protocol":"TCP"}]}}`, true},
		{"int-or-string name", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"ports":[{"port":80,"targetPort":"http"}]}}`,
			`{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"ports":[{"port":80,"targetPort":8080}]}}`, false},
		{"float vs int", `{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"t"},"spec":{"n":2.0}}`,
			`{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"t"},"spec":{"n":2}}`, true},
		{"null vs absent", `{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"t"},"spec":{"n":null}}`,
			`{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"t"},"spec":{}}`, true},
		{"empty list vs absent in a custom kind", `{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"t"},"spec":{"items":[],"x":1}}`,
			`{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"t"},"spec":{"x":1}}`, true},
		{"server metadata and tracking", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","annotations":{"gitops.kubegitops.io/tracking-id":"app:/ConfigMap:/c"}},"data":{"a":"1"}}`,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","uid":"u","resourceVersion":"9","generation":3,"creationTimestamp":"2026-01-01T00:00:00Z","annotations":{"gitops.kubegitops.io/tracking-id":"other:/ConfigMap:/c"}},"data":{"a":"1"}}`, true},
		{"status ignored", `{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"t"},"spec":{"x":1}}`,
			`{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"t"},"spec":{"x":1},"status":{"ready":true}}`, true},
		{"stringData vs data", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"k":"v"},"data":{"n":null}}`,
			`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"k":"dg==","n":""}}`, true},
		{"pull policy latest", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`,
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx","imagePullPolicy":"IfNotPresent"}]}}`, false},
	}
	d := mustDiffer(t, DefaultOptions())
	for _, c := range cases {
		a := d.Normalize(mustObject(t, c.desired))
		b := d.Normalize(mustObject(t, c.live))
		changes := compareObjects(a.Object, b.Object, nil)
		if (len(changes) == 0) != c.equal {
			t.Errorf("%s: changes %v, want equal=%v", c.name, changes, c.equal)
		}
	}
}

// TestNormalizeDoesNotModifyInput checks that neither Normalize nor Diff
// writes to the caller's objects.
func TestNormalizeDoesNotModifyInput(t *testing.T) {
	c := loadCorpusCase(t, "testdata/corpus/16-secret-changed.yaml")
	desired := &unstructured.Unstructured{Object: c.Desired}
	live := &unstructured.Unstructured{Object: c.LiveCSA}
	dc, lc := desired.DeepCopy(), live.DeepCopy()
	d := mustDiffer(t, DefaultOptions())
	d.Normalize(desired)
	if _, err := d.Diff(context.Background(), desired, live); err != nil {
		t.Fatal(err)
	}
	if ch := compareObjects(dc.Object, desired.Object, nil); len(ch) > 0 {
		t.Errorf("desired modified: %v", ch)
	}
	if ch := compareObjects(lc.Object, live.Object, nil); len(ch) > 0 {
		t.Errorf("live modified: %v", ch)
	}
}

// TestCompareStatusPerKind checks the per-kind status option.
func TestCompareStatusPerKind(t *testing.T) {
	desired := mustObject(t, `{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"t"},"status":{"phase":"A"}}`)
	live := mustObject(t, `{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"t"},"status":{"phase":"B"}}`)
	opts := DefaultOptions()
	res, _ := mustDiffer(t, opts).Diff(context.Background(), desired, live)
	if res.Modified {
		t.Error("status compared by default")
	}
	opts.CompareStatus = []schema.GroupKind{{Group: "example.com", Kind: "Thing"}}
	res, _ = mustDiffer(t, opts).Diff(context.Background(), desired, live)
	if !res.Modified {
		t.Error("status not compared for a listed kind")
	}
}

// TestModeSelection checks the choice of mode from options and
// annotations, as in Argo CD.
func TestModeSelection(t *testing.T) {
	parse := func(s string) resource.Options { o, _ := resource.ParseOptions(s); return o }
	cases := []struct {
		name       string
		appMode    Mode
		appCompare string
		appSync    string
		compare    string
		sync       string
		want       Mode
	}{
		{"default", ModeAuto, "", "", "", "", ModeThreeWay},
		{"object SSD", ModeAuto, "", "", "ServerSideDiff=true", "", ModeServerSide},
		{"object SSA", ModeAuto, "", "", "", "ServerSideApply=true", ModeStructuredMerge},
		{"SSD beats SSA", ModeAuto, "", "", "ServerSideDiff=true", "ServerSideApply=true", ModeServerSide},
		{"app SSD, object opts out", ModeAuto, "ServerSideDiff=true", "", "ServerSideDiff=false", "", ModeThreeWay},
		{"app SSD, object opts out to SSA", ModeAuto, "ServerSideDiff=true", "ServerSideApply=true", "ServerSideDiff=false", "", ModeStructuredMerge},
		{"app mode SSD", ModeServerSide, "", "", "", "", ModeServerSide},
		{"app mode SMD, object SSA off", ModeStructuredMerge, "", "", "", "ServerSideApply=false", ModeThreeWay},
		{"app sync SSA", ModeAuto, "", "ServerSideApply=true", "", "", ModeStructuredMerge},
	}
	for _, c := range cases {
		opts := DefaultOptions()
		opts.Mode = c.appMode
		opts.CompareOptions = parse(c.appCompare)
		opts.SyncOptions = parse(c.appSync)
		d := mustDiffer(t, opts)
		obj := mustObject(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`)
		obj.SetAnnotations(map[string]string{resource.AnnotationCompareOptions: c.compare, resource.AnnotationSyncOptions: c.sync})
		cmp, sync, err := d.objectOptions(obj)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.modeFor(cmp, sync); got != c.want {
			t.Errorf("%s: mode %s, want %s", c.name, got, c.want)
		}
	}
}

// TestMissingAndExtraneous checks the results for a missing and an
// extraneous object, and IgnoreExtraneous.
func TestMissingAndExtraneous(t *testing.T) {
	d := mustDiffer(t, DefaultOptions())
	cm := mustObject(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n"},"data":{"a":"1"}}`)
	res, err := d.Diff(context.Background(), cm, nil)
	if err != nil || !res.Missing || !res.Modified || res.Text == "" || !res.Patch.IsEmpty() {
		t.Errorf("missing: %+v %v", res, err)
	}
	res, err = d.Diff(context.Background(), nil, cm)
	if err != nil || !res.Extraneous || !res.Modified {
		t.Errorf("extraneous: %+v %v", res, err)
	}
	ign := cm.DeepCopy()
	ign.SetAnnotations(map[string]string{resource.AnnotationCompareOptions: "IgnoreExtraneous"})
	res, err = d.Diff(context.Background(), nil, ign)
	if err != nil || !res.Extraneous || res.Modified {
		t.Errorf("IgnoreExtraneous: %+v %v", res, err)
	}
	if _, err := d.Diff(context.Background(), nil, nil); err == nil {
		t.Error("nil, nil: want an error")
	}
}

// TestColorText checks that colour is optional and marks changed lines.
func TestColorText(t *testing.T) {
	c := loadCorpusCase(t, "testdata/corpus/11-image-changed.yaml")
	opts := DefaultOptions()
	opts.Color = true
	res, err := mustDiffer(t, opts).Diff(context.Background(), &unstructured.Unstructured{Object: c.Desired}, &unstructured.Unstructured{Object: c.LiveSSA})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(mustDiffer(t, DefaultOptions()).mustText(t, c), "\x1b[") {
		t.Error("colour without Options.Color")
	}
	if want := ansiGreen + "+      - image: nginx:1.26" + ansiReset; !strings.Contains(res.Text, want) {
		t.Errorf("coloured text lacks %q:\n%s", want, res.Text)
	}
}

func (d *Differ) mustText(t *testing.T, c corpusCase) string {
	t.Helper()
	res, err := d.Diff(context.Background(), &unstructured.Unstructured{Object: c.Desired}, &unstructured.Unstructured{Object: c.LiveSSA})
	if err != nil || res.Text == "" {
		t.Fatalf("no text: %v", err)
	}
	return res.Text
}

// TestNormalizeKeepsEmptyStructs checks that an empty struct that means
// something (an emptyDir volume) survives normalisation and reaches the
// patch, while empty maps and lists the server drops are dropped.
func TestNormalizeKeepsEmptyStructs(t *testing.T) {
	d := mustDiffer(t, DefaultOptions())
	pod := d.Normalize(mustObject(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{}},
"spec":{"nodeSelector":{},"volumes":[{"name":"scratch","emptyDir":{}}],"containers":[{"name":"c","image":"i:1","env":[]}]}}`))
	vols, _, _ := unstructured.NestedSlice(pod.Object, "spec", "volumes")
	if _, ok := vols[0].(map[string]any)["emptyDir"]; !ok {
		t.Errorf("emptyDir: {} dropped: %v", vols)
	}
	if _, ok, _ := unstructured.NestedMap(pod.Object, "spec", "nodeSelector"); ok {
		t.Error("empty nodeSelector kept")
	}
	live := mustObject(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i:1"}]}}`)
	desired := mustObject(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"volumes":[{"name":"scratch","emptyDir":{}}],"containers":[{"name":"c","image":"i:1"}]}}`)
	res, err := d.Diff(context.Background(), desired, live)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Patch.Data()), `"emptyDir":{}`) {
		t.Errorf("patch lost emptyDir: %s", res.Patch.Data())
	}
	// Adding emptyDir: {} to an existing volume is a change, even two-way.
	hostPath := mustObject(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"volumes":[{"name":"scratch","hostPath":{"path":"/x","type":""}}],"containers":[{"name":"c","image":"i:1"}]}}`)
	res, err = d.Diff(context.Background(), desired, hostPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 1 || res.Changes[0].Path != "/spec/volumes/0/emptyDir" {
		t.Errorf("changes %v, want /spec/volumes/0/emptyDir", res.Changes)
	}
}
