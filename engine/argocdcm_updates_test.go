package engine

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegitops/gitops/health"
)

// Argo CD v3's shipped argocd-cm loads with no error and no warning, and
// its rules reach the options.
func TestArgoCDv3DefaultConfigMapLoads(t *testing.T) {
	s, err := LoadArgoCDSettingsFile("testdata/argocd-cm-v3-default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Warnings) != 0 {
		t.Errorf("warnings for Argo CD's own keys: %v", s.Warnings)
	}
	if len(s.Exclusions) != 2*2+1+1+2*6+1+1+3+3*9 {
		t.Errorf("%d exclusions", len(s.Exclusions))
	}
	opts := DefaultOptions()
	if err := s.Apply(&opts); err != nil {
		t.Fatal(err)
	}
	if len(opts.IgnoreResourceUpdates) != len(DefaultIgnoreResourceUpdates()) {
		t.Errorf("%d update rules, want the %d defaults (the file repeats them)", len(opts.IgnoreResourceUpdates), len(DefaultIgnoreResourceUpdates()))
	}
	for _, gk := range []schema.GroupKind{{Group: "apiregistration.k8s.io", Kind: "APIService"}, {Group: "reports.kyverno.io", Kind: "EphemeralReport"}, {Group: "cilium.io", Kind: "CiliumIdentity"}} {
		if opts.Cache.Filter.Allows(gk) {
			t.Errorf("%v not excluded", gk)
		}
	}
	if _, err := newWithBuiltins(withCluster(opts)); err != nil {
		t.Fatalf("an engine with these options: %v", err)
	}
}

func withCluster(o Options) Options {
	o.Clusters = []ClusterConfig{{Name: "offline", Server: "https://offline.invalid"}}
	return o
}

// The ignoreResourceUpdates rules as Argo CD 3 resolves them: defaults,
// each replaced by a key of its kind (even an empty one); the legacy form
// loses to the key; ignoreDifferences customisations join unless
// ignoreDifferencesOnResourceUpdates is false; the switch turns them off.
func TestArgoCDSettingsIgnoreResourceUpdatesRules(t *testing.T) {
	find := func(rules []ResourceIgnoreDifferences, group, kind string) (ResourceIgnoreDifferences, int) {
		n, i := 0, -1
		for j, r := range rules {
			if r.Group == group && r.Kind == kind {
				n++
				i = j
			}
		}
		if i < 0 {
			return ResourceIgnoreDifferences{}, 0
		}
		return rules[i], n
	}
	s, err := ParseArgoCDSettings(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	if r, n := find(s.IgnoreResourceUpdates, "*", "*"); n != 1 || !slices.Equal(r.JSONPointers, []string{"/status"}) {
		t.Fatalf("default .all rule: %+v (%d)", r, n)
	}
	if len(s.IgnoreResourceUpdates) != len(DefaultIgnoreResourceUpdates()) {
		t.Fatalf("%d rules for an empty argocd-cm", len(s.IgnoreResourceUpdates))
	}

	s, err = ParseArgoCDSettings(map[string]string{
		"resource.customizations.ignoreResourceUpdates.ConfigMap":           "",
		"resource.customizations.ignoreResourceUpdates.apps_Deployment":     "jqPathExpressions: ['.metadata.annotations.\"x/y\"']\n",
		"resource.customizations.ignoreResourceUpdates.all":                 "jsonPointers: [/status, /metadata/labels/heartbeat]\n",
		"resource.customizations.ignoreDifferences.apps_StatefulSet":        "jsonPointers: [/spec/replicas]\n",
		"resource.customizations":                                           "apps/Deployment:\n  ignoreResourceUpdates: |\n    jsonPointers: [/spec/paused]\n",
		"resource.compareoptions":                                           "ignoreResourceStatusField: all\n",
		"resource.customizations.ignoreResourceUpdates.argoproj.io_Rollout": "jsonPointers: [/status/pauseConditions]\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	if r, n := find(s.IgnoreResourceUpdates, "", "ConfigMap"); n != 1 || len(r.JSONPointers)+len(r.JQPathExpressions) != 0 {
		t.Errorf("an empty key must replace the ConfigMap default with nothing: %+v", r)
	}
	if r, _ := find(s.IgnoreResourceUpdates, "apps", "Deployment"); !slices.Equal(r.JQPathExpressions, []string{`.metadata.annotations."x/y"`}) || len(r.JSONPointers) != 0 {
		t.Errorf("the key must win over the legacy form: %+v", r)
	}
	if r, _ := find(s.IgnoreResourceUpdates, "*", "*"); len(r.JSONPointers) != 2 {
		t.Errorf(".all: %+v", r)
	}
	if r, n := find(s.IgnoreResourceUpdates, "apps", "ReplicaSet"); n != 1 || len(r.JQPathExpressions) != 3 {
		t.Errorf("another kind's default must stay: %+v", r)
	}
	if r, n := find(s.IgnoreResourceUpdates, "apps", "StatefulSet"); n != 1 || !slices.Equal(r.JSONPointers, []string{"/spec/replicas"}) {
		t.Errorf("ignoreDifferences must join the update rules by default: %+v", r)
	}

	s, err = ParseArgoCDSettings(map[string]string{
		"resource.customizations.ignoreDifferences.apps_StatefulSet": "jsonPointers: [/spec/replicas]\n",
		"resource.compareoptions":                                    "ignoreDifferencesOnResourceUpdates: false\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, n := find(s.IgnoreResourceUpdates, "apps", "StatefulSet"); n != 0 {
		t.Error("ignoreDifferencesOnResourceUpdates: false still adds the ignoreDifferences rules")
	}

	s, err = ParseArgoCDSettings(map[string]string{"resource.ignoreResourceUpdatesEnabled": "false"})
	if err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions()
	if err := s.Apply(&opts); err != nil || s.IgnoreResourceUpdates != nil || opts.IgnoreResourceUpdates != nil {
		t.Errorf("disabled: %v %v %v", err, s.IgnoreResourceUpdates, opts.IgnoreResourceUpdates)
	}
}

// The judge of watched updates: a tracked object's change in ignored
// fields alone, with its health unchanged, needs no refresh; a change
// anywhere else, a change of health, or an untracked object does.
func TestUpdateIgnorerJudgesChanges(t *testing.T) {
	opts := DefaultOptions()
	s, err := ParseArgoCDSettings(map[string]string{
		"resource.customizations.ignoreResourceUpdates.ConfigMap": "jqPathExpressions: ['.data.heartbeat']\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(&opts); err != nil {
		t.Fatal(err)
	}
	hc, err := health.NewChecker(health.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	u, err := newUpdateIgnorer(opts, hc)
	if err != nil || u == nil {
		t.Fatalf("%v %v", u, err)
	}
	tracking := opts.Tracking
	dep := func(mut func(o *unstructured.Unstructured)) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "namespace": "ns", "resourceVersion": "1", "generation": int64(1)},
			"spec":     map[string]any{"replicas": int64(1)},
			"status": map[string]any{"observedGeneration": int64(1), "replicas": int64(1), "updatedReplicas": int64(1),
				"availableReplicas": int64(1), "readyReplicas": int64(1)},
		}}
		if err := tracking.Set(o, "app"); err != nil {
			t.Fatal(err)
		}
		if mut != nil {
			mut(o)
		}
		return o
	}
	base := dep(nil)
	cases := map[string]struct {
		cur  *unstructured.Unstructured
		skip bool
	}{
		"status and resourceVersion only": {dep(func(o *unstructured.Unstructured) {
			o.SetResourceVersion("2")
			_ = unstructured.SetNestedField(o.Object, int64(3), "status", "collisionCount")
		}), true},
		"generation (observed) and managedFields only": {dep(func(o *unstructured.Unstructured) {
			o.SetGeneration(2)
			_ = unstructured.SetNestedField(o.Object, int64(2), "status", "observedGeneration")
			o.Object["metadata"].(map[string]any)["managedFields"] = []any{map[string]any{"manager": "x"}}
		}), true},
		"generation not yet observed (health Progressing)": {dep(func(o *unstructured.Unstructured) {
			o.SetGeneration(2)
		}), false},
		"spec": {dep(func(o *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(o.Object, int64(2), "spec", "replicas")
		}), false},
		"a label": {dep(func(o *unstructured.Unstructured) { o.SetLabels(map[string]string{"a": "b"}) }), false},
		"status that changes health": {dep(func(o *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(o.Object, int64(0), "status", "availableReplicas")
			_ = unstructured.SetNestedField(o.Object, int64(0), "status", "readyReplicas")
		}), false},
	}
	for name, c := range cases {
		if got := u.skip(base, c.cur); got != c.skip {
			t.Errorf("%s: skip = %v, want %v", name, got, c.skip)
		}
	}
	untracked := func(ann map[string]string, v string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c", "namespace": "ns"}, "data": map[string]any{"heartbeat": v, "k": "v"}}}
		o.SetAnnotations(ann)
		return o
	}
	if u.skip(untracked(nil, "1"), untracked(nil, "2")) {
		t.Error("an untracked object's update was judged")
	}
	ann := map[string]string{AnnotationIgnoreResourceUpdates: "true"}
	if !u.skip(untracked(ann, "1"), untracked(ann, "2")) {
		t.Error("an annotated untracked object's change of an ignored field needs a refresh")
	}
	changed := untracked(ann, "2")
	changed.Object["data"].(map[string]any)["k"] = "w"
	if u.skip(untracked(ann, "1"), changed) {
		t.Error("a change of data.k was ignored")
	}
}

// timeout.hard.reconciliation becomes Options.HardInterval.
func TestArgoCDSettingsHardReconciliation(t *testing.T) {
	s, err := ParseArgoCDSettings(map[string]string{"timeout.hard.reconciliation": "90m"})
	if err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions()
	if err := s.Apply(&opts); err != nil || opts.HardInterval != 90*time.Minute {
		t.Fatalf("%v %v", opts.HardInterval, err)
	}
	s, _ = ParseArgoCDSettings(map[string]string{"timeout.hard.reconciliation": "0"})
	opts = DefaultOptions()
	if err := s.Apply(&opts); err != nil || opts.HardInterval != 0 {
		t.Fatalf("0 must leave hard refreshes off: %v", opts.HardInterval)
	}
}

// resource.exclusions entries with clusters apply to those clusters only:
// the engine reports an excluded desired object on a matching destination
// and keeps it on another.
func TestArgoCDSettingsExclusionsLimitedToClusters(t *testing.T) {
	s, err := ParseArgoCDSettings(map[string]string{"resource.exclusions": `
- apiGroups: [""]
  kinds: [ConfigMap]
  clusters: ["https://*.prod.example.net"]
`})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Exclusions) != 1 || !slices.Equal(s.Exclusions[0].Clusters, []string{"https://*.prod.example.net"}) {
		t.Fatalf("%+v", s.Exclusions)
	}
	opts := DefaultOptions()
	if err := s.Apply(&opts); err != nil {
		t.Fatal(err)
	}
	opts.Clusters = []ClusterConfig{{Name: "eu", Server: "https://eu.prod.example.net"}, {Name: "dev", Server: "https://dev.example.net"}}
	e, err := newWithBuiltins(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}}
	for name, wantExcluded := range map[string]bool{"eu": true, "dev": false} {
		cs, err := e.destination(ApplicationDestination{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		app := &Application{Spec: ApplicationSpec{Destination: ApplicationDestination{Name: name, Namespace: "ns"}}}
		_, excluded := e.desired.SplitExcluded(app, cs.desiredView(), []*unstructured.Unstructured{cm})
		if (len(excluded) == 1) != wantExcluded {
			t.Errorf("cluster %s: excluded %v, want excluded=%v", name, excluded, wantExcluded)
		}
	}
}

// ArgoCDDefaults ignores resource updates as Argo CD 3 does.
func TestArgoCDDefaultsIgnoreResourceUpdates(t *testing.T) {
	if DefaultOptions().IgnoreResourceUpdates != nil {
		t.Error("the library's default judges updates")
	}
	got := ArgoCDDefaults().IgnoreResourceUpdates
	if len(got) != len(DefaultIgnoreResourceUpdates()) || !slices.ContainsFunc(got, func(r ResourceIgnoreDifferences) bool {
		return r.Group == "*" && r.Kind == "*" && slices.Equal(r.JSONPointers, []string{"/status"})
	}) {
		t.Fatalf("%+v", got)
	}
}

// Apply over ArgoCDDefaults repeats no rule; an argocd-cm that turns
// update ignoring off turns it off.
func TestArgoCDSettingsApplyOverArgoCDDefaults(t *testing.T) {
	s, err := ParseArgoCDSettings(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	opts := ArgoCDDefaults()
	if err := s.Apply(&opts); err != nil || len(opts.IgnoreResourceUpdates) != len(DefaultIgnoreResourceUpdates()) {
		t.Fatalf("%d rules, %v", len(opts.IgnoreResourceUpdates), err)
	}
	s, _ = ParseArgoCDSettings(map[string]string{"resource.ignoreResourceUpdatesEnabled": "false"})
	opts = ArgoCDDefaults()
	if err := s.Apply(&opts); err != nil || opts.IgnoreResourceUpdates != nil {
		t.Fatalf("not turned off: %v %v", opts.IgnoreResourceUpdates, err)
	}
}

// A rule that fails on an object (a jq error) never drops its update: the
// app is refreshed, as it would be without the rule.
func TestUpdateIgnorerFailingRuleRefreshes(t *testing.T) {
	opts := DefaultOptions()
	opts.IgnoreResourceUpdates = []ResourceIgnoreDifferences{{Kind: "ConfigMap", JQPathExpressions: []string{`.data.k | error("boom")`}}}
	hc, err := health.NewChecker(health.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	u, err := newUpdateIgnorer(opts, hc)
	if err != nil {
		t.Fatal(err)
	}
	cm := func(rv string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c", "namespace": "ns", "resourceVersion": rv}, "data": map[string]any{"k": "v"}}}
		if err := opts.Tracking.Set(o, "app"); err != nil {
			t.Fatal(err)
		}
		return o
	}
	if u.skip(cm("1"), cm("2")) {
		t.Fatal("an update judged by a failing rule was dropped")
	}
	// A rule that does not compile is refused when the engine is built.
	opts.IgnoreResourceUpdates = []ResourceIgnoreDifferences{{Kind: "ConfigMap", JSONPointers: []string{"no-slash"}}}
	opts.Clusters = []ClusterConfig{{Name: "offline", Server: "https://offline.invalid"}}
	if _, err := newWithBuiltins(opts); err == nil || !strings.Contains(err.Error(), "IgnoreResourceUpdates") {
		t.Fatalf("a bad rule: %v", err)
	}
}
