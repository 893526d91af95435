package diff

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// secretPlaintexts are the values the corpus's Secrets hold.
var secretPlaintexts = []string{"corpus-plaintext-pw", "corpus-old-password", "corpus-new-password"}

// assertNoSecret fails if any plaintext, or its base64 form, appears in out.
func assertNoSecret(t *testing.T, what, out string) {
	t.Helper()
	for _, p := range secretPlaintexts {
		for _, needle := range []string{p, base64.StdEncoding.EncodeToString([]byte(p))} {
			if strings.Contains(out, needle) {
				t.Errorf("%s leaks %q:\n%s", what, needle, out)
			}
		}
	}
}

// allOutput renders everything a Result exposes, every way a caller might
// print or serialise it.
func allOutput(t *testing.T, res Result) string {
	t.Helper()
	js, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%v\n%+v\n%#v\n%s\n%s\n%s\n", res, res, res, js, res.Text, res.Patch)
	for _, u := range []*unstructured.Unstructured{res.Desired, res.PredictedLive, res.Live} {
		if u != nil {
			j, _ := u.MarshalJSON()
			b.Write(j)
		}
	}
	for _, c := range res.Changes {
		b.WriteString(c.Path)
	}
	return b.String()
}

// TestSecretNeverInOutput diffs Secrets (in sync, changed, missing,
// extraneous, in every local mode, with and without last-applied holding
// stringData) and greps every output for their plaintext: text, result
// objects, changes, printed and JSON forms, and errors. Only Patch.Data,
// which goes to the API server, holds the new value.
func TestSecretNeverInOutput(t *testing.T) {
	changed := loadCorpusCase(t, "testdata/corpus/16-secret-changed.yaml")
	same := loadCorpusCase(t, "testdata/corpus/07-secret-stringdata.yaml")
	for _, mode := range []Mode{ModeThreeWay, ModeStructuredMerge} {
		opts := DefaultOptions()
		opts.Mode = mode
		opts.Color = true
		d := mustDiffer(t, opts)
		for _, c := range []corpusCase{changed, same} {
			desired := &unstructured.Unstructured{Object: c.Desired}
			for _, live := range []*unstructured.Unstructured{{Object: c.LiveCSA}, {Object: c.LiveSSA}, nil} {
				res, err := d.Diff(context.Background(), desired, live)
				if err != nil {
					t.Fatal(err)
				}
				assertNoSecret(t, c.Name+" "+string(mode), allOutput(t, res))
			}
			res, err := d.Diff(context.Background(), nil, &unstructured.Unstructured{Object: c.LiveCSA})
			if err != nil {
				t.Fatal(err)
			}
			assertNoSecret(t, c.Name+" extraneous", allOutput(t, res))
		}
		res, err := d.Diff(context.Background(), &unstructured.Unstructured{Object: changed.Desired}, &unstructured.Unstructured{Object: changed.LiveCSA})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Modified || len(res.Changes) != 1 || res.Changes[0].Path != "/data/password" {
			t.Fatalf("%s: changes %v, want /data/password", mode, res.Changes)
		}
		if !strings.Contains(string(res.Patch.Data()), base64.StdEncoding.EncodeToString([]byte("corpus-new-password"))) {
			t.Errorf("%s: Patch.Data must carry the real new value for sync", mode)
		}
		// The unchanged user value keeps the same placeholder on both sides,
		// the changed password gets two different ones.
		du, _, _ := unstructured.NestedString(res.PredictedLive.Object, "data", "user")
		lu, _, _ := unstructured.NestedString(res.Live.Object, "data", "user")
		dp, _, _ := unstructured.NestedString(res.PredictedLive.Object, "data", "password")
		lp, _, _ := unstructured.NestedString(res.Live.Object, "data", "password")
		if du != lu || dp == lp || !strings.HasPrefix(dp, "+masked-") {
			t.Errorf("%s: placeholders user %q/%q password %q/%q", mode, du, lu, dp, lp)
		}
	}
}

// TestSecretNeverInErrors makes diffs of Secrets fail in the ways that
// quote values (a jq rule that chokes on data, a malformed last-applied
// annotation, a live object that is another kind) and greps the errors.
func TestSecretNeverInErrors(t *testing.T) {
	c := loadCorpusCase(t, "testdata/corpus/16-secret-changed.yaml")
	desired := &unstructured.Unstructured{Object: c.Desired}
	live := &unstructured.Unstructured{Object: c.LiveCSA}

	opts := DefaultOptions()
	opts.IgnoreRules = []IgnoreRule{{Kind: "Secret", JQPathExpressions: []string{`.data.password | keys`, `.data.user + 1`}}}
	for _, expr := range opts.IgnoreRules[0].JQPathExpressions {
		o := opts
		o.IgnoreRules = []IgnoreRule{{Kind: "Secret", JQPathExpressions: []string{expr}}}
		_, err := mustDiffer(t, o).Diff(context.Background(), desired, live)
		if err == nil {
			t.Fatalf("%s: want an error", expr)
		}
		assertNoSecret(t, "jq error", fmt.Sprintf("%v %+v %#v", err, err, err))
	}

	broken := live.DeepCopy()
	anns := broken.GetAnnotations()
	anns["kubectl.kubernetes.io/last-applied-configuration"] = `{"stringData":{"password":"corpus-old-password"` // truncated
	broken.SetAnnotations(anns)
	_, err := mustDiffer(t, DefaultOptions()).Diff(context.Background(), desired, broken)
	if err == nil {
		t.Fatal("malformed last-applied: want an error")
	}
	assertNoSecret(t, "last-applied error", fmt.Sprintf("%v %+v %#v", err, err, err))

	other := live.DeepCopy()
	other.SetKind("ConfigMap")
	_, err = mustDiffer(t, DefaultOptions()).Diff(context.Background(), desired, other)
	if err == nil {
		t.Fatal("kind mismatch: want an error")
	}
	assertNoSecret(t, "mismatch error", fmt.Sprintf("%v %+v %#v", err, err, err))
}

// TestSecretMaskingFromParsedKind checks that masking follows the parsed
// kind of either side: a Secret on one side only is still masked, and a
// custom "Secret" kind in another group is a plain object.
func TestSecretMaskingFromParsedKind(t *testing.T) {
	c := loadCorpusCase(t, "testdata/corpus/16-secret-changed.yaml")
	d := mustDiffer(t, DefaultOptions())
	res, err := d.Diff(context.Background(), nil, &unstructured.Unstructured{Object: c.LiveSSA})
	if err != nil {
		t.Fatal(err)
	}
	assertNoSecret(t, "live-only Secret", allOutput(t, res))

	cr := mustObject(t, `
apiVersion: example.com/v1
kind: Secret
metadata: {name: x, namespace: ns}
data: {k: visible-value}
`)
	live := cr.DeepCopy()
	_ = unstructured.SetNestedField(live.Object, "other-value", "data", "k")
	res, err = d.Diff(context.Background(), cr, live)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "visible-value") {
		t.Errorf("a custom kind named Secret is not a core Secret; text:\n%s", res.Text)
	}
}
