package diff

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/resource"
)

// KeepIgnored gives ignored fields their live values (JSON pointer and jq
// alike), leaves out an ignored field the live object lacks, creates the
// maps above a kept value, and leaves objects to create alone.
func TestKeepIgnored(t *testing.T) {
	ctx := context.Background()
	opts := DefaultOptions()
	opts.IgnoreRules = []IgnoreRule{
		{Kind: "ConfigMap", JSONPointers: []string{"/data/volatile", "/metadata/annotations/stamp"}},
		{Kind: "ConfigMap", JQPathExpressions: []string{".data.gone"}},
	}
	d := mustDiffer(t, opts)
	desired := mustObject(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: n}, data: {stable: git, volatile: git, gone: git}}`)
	live := mustObject(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: n, annotations: {stamp: "7"}}, data: {stable: drifted, volatile: drifted}}`)
	before := desired.DeepCopy()
	out, err := d.KeepIgnored(ctx, desired, live)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"stable": "git", "volatile": "drifted"}
	if got := out.Object["data"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("data %v, want %v", got, want)
	}
	if out.GetAnnotations()["stamp"] != "7" {
		t.Fatalf("annotations %v", out.GetAnnotations())
	}
	if !reflect.DeepEqual(desired.Object, before.Object) {
		t.Fatal("desired was modified")
	}
	if out, err := d.KeepIgnored(ctx, desired, nil); err != nil || out != desired {
		t.Fatalf("an object to create: %v", err)
	}
	other := mustObject(t, `{apiVersion: v1, kind: Secret, metadata: {name: c, namespace: n}, data: {volatile: Z2l0}}`)
	if out, err := d.KeepIgnored(ctx, other, other.DeepCopy()); err != nil || out != other {
		t.Fatalf("an object no rule matches: %v", err)
	}
}

// Result.ResetIgnored names the ignored fields that Git sets to another
// value than the live one, and Text says so, unless the application keeps
// them (RespectIgnoreDifferences=true).
func TestResetIgnoredReported(t *testing.T) {
	ctx := context.Background()
	desired := mustObject(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: n}, data: {stable: git, volatile: git, same: x}}`)
	live := mustObject(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: n}, data: {stable: drifted, volatile: drifted, same: x}}`)
	for _, respect := range []bool{false, true} {
		opts := DefaultOptions()
		opts.IgnoreRules = []IgnoreRule{{Kind: "ConfigMap", JSONPointers: []string{"/data/volatile", "/data/same"}}}
		if respect {
			opts.SyncOptions = mustOptions(t, "RespectIgnoreDifferences=true")
		}
		res, err := mustDiffer(t, opts).Diff(ctx, desired, live)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Changes) != 1 || res.Changes[0].Path != "/data/stable" {
			t.Fatalf("changes %+v", res.Changes)
		}
		note := strings.Contains(res.Text, "ignored field(s) /data/volatile differ from Git")
		switch {
		case respect && (res.ResetIgnored != nil || note):
			t.Fatalf("respect: reset %v, note %v", res.ResetIgnored, note)
		case !respect && (!reflect.DeepEqual(res.ResetIgnored, []string{"/data/volatile"}) || !note):
			t.Fatalf("default: reset %v, text:\n%s", res.ResetIgnored, res.Text)
		}
	}
}

func mustOptions(t *testing.T, s string) resource.Options {
	t.Helper()
	o, err := resource.ParseOptions(s)
	if err != nil {
		t.Fatal(err)
	}
	return o
}
