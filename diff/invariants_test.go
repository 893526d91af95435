package diff

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"
)

// applyPatch applies res.Patch to the normalised live object, as the API
// server would, and normalises the result.
func applyPatch(t *testing.T, d *Differ, live *unstructured.Unstructured, p Patch) map[string]any {
	t.Helper()
	base := d.Normalize(live)
	lj, err := json.Marshal(base.Object)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	switch p.Type {
	case types.StrategicMergePatchType:
		typed, err := scheme.Scheme.New(live.GroupVersionKind())
		if err != nil {
			t.Fatal(err)
		}
		out, err = strategicpatch.StrategicMergePatch(lj, p.Data(), typed)
		if err != nil {
			t.Fatalf("apply strategic patch: %v", err)
		}
	case types.MergePatchType:
		var m map[string]any
		if err := json.Unmarshal(p.Data(), &m); err != nil {
			t.Fatal(err)
		}
		applyMergePatch(base.Object, m)
		out, _ = json.Marshal(base.Object)
	default:
		t.Fatalf("patch type %q", p.Type)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	d.norm.normalize(m)
	return m
}

func applyMergePatch(dst, patch map[string]any) {
	for k, v := range patch {
		if v == nil {
			delete(dst, k)
			continue
		}
		if pm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				applyMergePatch(dm, pm)
				continue
			}
		}
		dst[k] = v
	}
}

// TestInvariantEmptyDiffMeansInSync checks, over the whole corpus in every
// local mode and live variant, that Modified, Changes, Text and Patch
// agree, and that the patch turns live into exactly PredictedLive: what
// status says, what is shown and what sync writes are one thing.
func TestInvariantEmptyDiffMeansInSync(t *testing.T) {
	files, _ := filepath.Glob("testdata/corpus/*.yaml")
	checked := 0
	for _, file := range files {
		c := loadCorpusCase(t, file)
		desired := &unstructured.Unstructured{Object: c.Desired}
		for _, mode := range []Mode{ModeThreeWay, ModeStructuredMerge} {
			opts := DefaultOptions()
			opts.Mode = mode
			d := mustDiffer(t, opts)
			for _, live := range []*unstructured.Unstructured{{Object: c.LiveCSA}, {Object: c.LiveSSA}, stripHistory(&unstructured.Unstructured{Object: c.LiveSSA})} {
				res, err := d.Diff(context.Background(), desired, live)
				if err != nil {
					t.Fatalf("%s %s: %v", c.Name, mode, err)
				}
				if res.Modified != (len(res.Changes) > 0) || res.Modified != (res.Text != "") || res.Modified != !res.Patch.IsEmpty() {
					t.Errorf("%s %s: modified=%v changes=%d text=%d patch=%d", c.Name, mode, res.Modified, len(res.Changes), len(res.Text), len(res.Patch.Data()))
				}
				if !res.Modified {
					continue
				}
				if res.Key.Kind == "Secret" {
					continue // the result's objects are masked; the patch is not
				}
				checked++
				got := applyPatch(t, d, live, res.Patch)
				if ch := compareObjects(got, res.PredictedLive.Object, nil); len(ch) > 0 {
					t.Errorf("%s %s: live+patch differs from PredictedLive: %v\npatch %s", c.Name, mode, ch, res.Patch.Data())
				}
			}
		}
	}
	if checked < 5 {
		t.Fatalf("only %d patches checked", checked)
	}
}

// TestInvariantIgnoredFieldNeverInPatch ignores a changed field, by JSON
// pointer and by jq, and checks that it no longer counts, is not in the
// patch, and keeps its live value once the patch is applied, while the
// other change still goes through.
func TestInvariantIgnoredFieldNeverInPatch(t *testing.T) {
	c := loadCorpusCase(t, "testdata/corpus/11-image-changed.yaml")
	desired := (&unstructured.Unstructured{Object: c.Desired}).DeepCopy()
	if err := unstructured.SetNestedField(desired.Object, int64(7), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	rules := map[string]IgnoreRule{
		"pointer": {Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/template/spec/containers/0/image"}},
		"jq":      {Group: "apps", Kind: "Deployment", JQPathExpressions: []string{`.spec.template.spec.containers[] | select(.name == "app") | .image`}},
		"glob":    {Group: "*", Kind: "Deploy*", Name: "im?", Namespace: "corp*", JSONPointers: []string{"/spec/template/spec/containers/0/image"}},
	}
	for name, rule := range rules {
		for _, mode := range []Mode{ModeThreeWay, ModeStructuredMerge} {
			opts := DefaultOptions()
			opts.Mode = mode
			opts.IgnoreRules = []IgnoreRule{rule}
			d := mustDiffer(t, opts)
			live := &unstructured.Unstructured{Object: c.LiveSSA}
			res, err := d.Diff(context.Background(), desired, live)
			if err != nil {
				t.Fatalf("%s %s: %v", name, mode, err)
			}
			if len(res.Changes) != 1 || res.Changes[0].Path != "/spec/replicas" {
				t.Fatalf("%s %s: changes %v, want only /spec/replicas", name, mode, res.Changes)
			}
			if strings.Contains(string(res.Patch.Data()), "image") || strings.Contains(string(res.Patch.Data()), "nginx") {
				t.Errorf("%s %s: ignored field in patch: %s", name, mode, res.Patch.Data())
			}
			// The unified diff never shows the ignored field; the note that
			// ends the text names it, because a sync of the whole object
			// writes Git's image (Result.ResetIgnored).
			hunks, note, _ := strings.Cut(res.Text, "# note: ignored field(s) ")
			if strings.Contains(hunks, "image") {
				t.Errorf("%s %s: ignored field in text:\n%s", name, mode, res.Text)
			}
			if !strings.HasPrefix(note, "/spec/template/spec/containers/0/image ") || len(res.ResetIgnored) != 1 {
				t.Errorf("%s %s: reset ignored %v, note %q", name, mode, res.ResetIgnored, note)
			}
			got := applyPatch(t, d, live, res.Patch)
			img, _, _ := unstructured.NestedSlice(got, "spec", "template", "spec", "containers")
			if img[0].(map[string]any)["image"] != "nginx:1.25" {
				t.Errorf("%s %s: patch changed the ignored image: %v", name, mode, img[0])
			}
			if r, _, _ := unstructured.NestedInt64(got, "spec", "replicas"); r != 7 {
				t.Errorf("%s %s: replicas %d after patch, want 7", name, mode, r)
			}
		}
	}
}

// TestIgnoreRuleSelectors checks that a rule applies only to the objects
// its selectors name.
func TestIgnoreRuleSelectors(t *testing.T) {
	c := loadCorpusCase(t, "testdata/corpus/11-image-changed.yaml")
	desired := &unstructured.Unstructured{Object: c.Desired}
	live := &unstructured.Unstructured{Object: c.LiveSSA}
	for name, rule := range map[string]IgnoreRule{
		"other group":     {Group: "", Kind: "Deployment", JSONPointers: []string{"/spec/template"}},
		"other kind":      {Group: "apps", Kind: "StatefulSet", JSONPointers: []string{"/spec/template"}},
		"other name":      {Group: "apps", Kind: "Deployment", Name: "web", JSONPointers: []string{"/spec/template"}},
		"other namespace": {Group: "apps", Kind: "Deployment", Namespace: "prod", JSONPointers: []string{"/spec/template"}},
	} {
		opts := DefaultOptions()
		opts.IgnoreRules = []IgnoreRule{rule}
		res, err := mustDiffer(t, opts).Diff(context.Background(), desired, live)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Modified {
			t.Errorf("%s: rule applied to an object it does not select", name)
		}
	}
}

// TestIgnoreManagedFieldsManagers ignores the fields an autoscaler owns in
// three-way mode (which would otherwise revert them).
func TestIgnoreManagedFieldsManagers(t *testing.T) {
	c := loadCorpusCase(t, "testdata/corpus/08-hpa-owns-replicas.yaml")
	desired := &unstructured.Unstructured{Object: c.Desired}
	live := &unstructured.Unstructured{Object: c.LiveCSA}
	opts := DefaultOptions()
	opts.Mode = ModeThreeWay
	res, err := mustDiffer(t, opts).Diff(context.Background(), desired, live)
	if err != nil || !res.Modified {
		t.Fatalf("without the rule three-way must revert replicas: %v %v", res.Changes, err)
	}
	opts.IgnoreRules = []IgnoreRule{{Group: "apps", Kind: "Deployment", ManagedFieldsManagers: []string{"hpa-controller"}}}
	res, err = mustDiffer(t, opts).Diff(context.Background(), desired, live)
	if err != nil {
		t.Fatal(err)
	}
	if res.Modified {
		t.Errorf("replicas owned by hpa-controller still compared: %v", res.Changes)
	}
}

// TestSystemRuleCABundle checks the default system rule: a CA bundle that
// a cert controller injected over the chart's placeholder is not a change.
func TestSystemRuleCABundle(t *testing.T) {
	desired := mustObject(t, `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: hook}
webhooks:
- name: v.example.com
  clientConfig: {service: {name: svc, namespace: ns}, caBundle: Cg==}
  admissionReviewVersions: [v1]
  sideEffects: None
`)
	live := desired.DeepCopy()
	hooks, _, _ := unstructured.NestedSlice(live.Object, "webhooks")
	hooks[0].(map[string]any)["clientConfig"].(map[string]any)["caBundle"] = "LS0tLS1CRUdJTi0tLS0t"
	_ = unstructured.SetNestedSlice(live.Object, hooks, "webhooks")
	res, err := mustDiffer(t, DefaultOptions()).Diff(context.Background(), desired, live)
	if err != nil {
		t.Fatal(err)
	}
	if res.Modified {
		t.Errorf("injected caBundle compared: %v", res.Changes)
	}
	opts := DefaultOptions()
	opts.SystemIgnoreRules = nil
	res, _ = mustDiffer(t, opts).Diff(context.Background(), desired, live)
	if !res.Modified {
		t.Error("without system rules the caBundle must be a change")
	}
}

// TestStructuredMergeDriftByUpdateIsCompared checks that honouring other
// managers does not hide drift: when every field belongs to a manager that
// wrote it by a plain update (here the client-side apply manager, not
// counted as ours), a changed image is still a change (argo-cd#23126).
func TestStructuredMergeDriftByUpdateIsCompared(t *testing.T) {
	c := loadCorpusCase(t, "testdata/corpus/11-image-changed.yaml")
	opts := DefaultOptions()
	opts.Mode = ModeStructuredMerge
	opts.MigratedManagers = []string{}
	res, err := mustDiffer(t, opts).Diff(context.Background(), &unstructured.Unstructured{Object: c.Desired}, &unstructured.Unstructured{Object: c.LiveCSA})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 1 || res.Changes[0].Path != "/spec/template/spec/containers/0/image" {
		t.Errorf("changes %v, want the image", res.Changes)
	}
}
