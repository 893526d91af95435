package argocdcm

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/engine"
)

// Argo CD v3's shipped argocd-cm loads with no error and no warning, and
// its rules reach the options.
func TestArgoCDv3DefaultConfigMapLoads(t *testing.T) {
	s, err := LoadFile("testdata/argocd-cm-v3-default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Warnings) != 0 {
		t.Errorf("warnings for Argo CD's own keys: %v", s.Warnings)
	}
	if len(s.Exclusions) != 2*2+1+1+2*6+1+1+3+3*9 {
		t.Errorf("%d exclusions", len(s.Exclusions))
	}
	opts := gitops.DefaultOptions()
	if err := s.Apply(&opts); err != nil {
		t.Fatal(err)
	}
	if len(opts.IgnoreResourceUpdates) != len(engine.DefaultIgnoreResourceUpdates()) {
		t.Errorf("%d update rules, want the %d defaults (the file repeats them)", len(opts.IgnoreResourceUpdates), len(engine.DefaultIgnoreResourceUpdates()))
	}
	for _, gk := range []schema.GroupKind{{Group: "apiregistration.k8s.io", Kind: "APIService"}, {Group: "reports.kyverno.io", Kind: "EphemeralReport"}, {Group: "cilium.io", Kind: "CiliumIdentity"}} {
		if opts.Cache.Filter.Allows(gk) {
			t.Errorf("%v not excluded", gk)
		}
	}
	if _, err := gitops.New(withCluster(opts)); err != nil {
		t.Fatalf("an engine with these options: %v", err)
	}
}

func withCluster(o gitops.Options) gitops.Options {
	o.Clusters = []gitops.ClusterConfig{{Name: "offline", Server: "https://offline.invalid"}}
	return o
}

// The ignoreResourceUpdates rules as Argo CD 3 resolves them: defaults,
// each replaced by a key of its kind (even an empty one); the legacy form
// loses to the key; ignoreDifferences customisations join unless
// ignoreDifferencesOnResourceUpdates is false; the switch turns them off.
func TestArgoCDSettingsIgnoreResourceUpdatesRules(t *testing.T) {
	find := func(rules []engine.ResourceIgnoreDifferences, group, kind string) (engine.ResourceIgnoreDifferences, int) {
		n, i := 0, -1
		for j, r := range rules {
			if r.Group == group && r.Kind == kind {
				n++
				i = j
			}
		}
		if i < 0 {
			return engine.ResourceIgnoreDifferences{}, 0
		}
		return rules[i], n
	}
	s, err := Parse(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	if r, n := find(s.IgnoreResourceUpdates, "*", "*"); n != 1 || !slices.Equal(r.JSONPointers, []string{"/status"}) {
		t.Fatalf("default .all rule: %+v (%d)", r, n)
	}
	if len(s.IgnoreResourceUpdates) != len(engine.DefaultIgnoreResourceUpdates()) {
		t.Fatalf("%d rules for an empty argocd-cm", len(s.IgnoreResourceUpdates))
	}

	s, err = Parse(map[string]string{
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

	s, err = Parse(map[string]string{
		"resource.customizations.ignoreDifferences.apps_StatefulSet": "jsonPointers: [/spec/replicas]\n",
		"resource.compareoptions":                                    "ignoreDifferencesOnResourceUpdates: false\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, n := find(s.IgnoreResourceUpdates, "apps", "StatefulSet"); n != 0 {
		t.Error("ignoreDifferencesOnResourceUpdates: false still adds the ignoreDifferences rules")
	}

	s, err = Parse(map[string]string{"resource.ignoreResourceUpdatesEnabled": "false"})
	if err != nil {
		t.Fatal(err)
	}
	opts := gitops.DefaultOptions()
	if err := s.Apply(&opts); err != nil || s.IgnoreResourceUpdates != nil || opts.IgnoreResourceUpdates != nil {
		t.Errorf("disabled: %v %v %v", err, s.IgnoreResourceUpdates, opts.IgnoreResourceUpdates)
	}
}

// timeout.hard.reconciliation becomes Options.HardInterval.
func TestArgoCDSettingsHardReconciliation(t *testing.T) {
	s, err := Parse(map[string]string{"timeout.hard.reconciliation": "90m"})
	if err != nil {
		t.Fatal(err)
	}
	opts := gitops.DefaultOptions()
	if err := s.Apply(&opts); err != nil || opts.HardInterval != 90*time.Minute {
		t.Fatalf("%v %v", opts.HardInterval, err)
	}
	s, _ = Parse(map[string]string{"timeout.hard.reconciliation": "0"})
	opts = gitops.DefaultOptions()
	if err := s.Apply(&opts); err != nil || opts.HardInterval != 0 {
		t.Fatalf("0 must leave hard refreshes off: %v", opts.HardInterval)
	}
}

// resource.exclusions entries with clusters apply to those clusters only:
// the entry keeps its clusters, and the options exclude the kind on a
// matching server and keep it on another (the engine's use of the filter
// is TestExclusionsLimitedToClusters in the root package).
func TestArgoCDSettingsExclusionsLimitedToClusters(t *testing.T) {
	s, err := Parse(map[string]string{"resource.exclusions": `
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
	opts := gitops.DefaultOptions()
	if err := s.Apply(&opts); err != nil {
		t.Fatal(err)
	}
	cm := schema.GroupKind{Kind: "ConfigMap"}
	for server, wantExcluded := range map[string]bool{"https://eu.prod.example.net": true, "https://dev.example.net": false} {
		if excluded := !opts.Cache.Filter.AllowsOn(cm, server); excluded != wantExcluded {
			t.Errorf("cluster %s: excluded=%v, want %v", server, excluded, wantExcluded)
		}
	}
}

// Defaults ignores resource updates as Argo CD 3 does.
func TestArgoCDDefaultsIgnoreResourceUpdates(t *testing.T) {
	if gitops.DefaultOptions().IgnoreResourceUpdates != nil {
		t.Error("the library's default judges updates")
	}
	got := Defaults().IgnoreResourceUpdates
	if len(got) != len(engine.DefaultIgnoreResourceUpdates()) || !slices.ContainsFunc(got, func(r engine.ResourceIgnoreDifferences) bool {
		return r.Group == "*" && r.Kind == "*" && slices.Equal(r.JSONPointers, []string{"/status"})
	}) {
		t.Fatalf("%+v", got)
	}
}

// Apply over Defaults repeats no rule; an argocd-cm that turns
// update ignoring off turns it off.
func TestArgoCDSettingsApplyOverArgoCDDefaults(t *testing.T) {
	s, err := Parse(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	opts := Defaults()
	if err := s.Apply(&opts); err != nil || len(opts.IgnoreResourceUpdates) != len(engine.DefaultIgnoreResourceUpdates()) {
		t.Fatalf("%d rules, %v", len(opts.IgnoreResourceUpdates), err)
	}
	s, _ = Parse(map[string]string{"resource.ignoreResourceUpdatesEnabled": "false"})
	opts = Defaults()
	if err := s.Apply(&opts); err != nil || opts.IgnoreResourceUpdates != nil {
		t.Fatalf("not turned off: %v %v", opts.IgnoreResourceUpdates, err)
	}
}
