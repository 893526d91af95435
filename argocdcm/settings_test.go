package argocdcm

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/resource"
)

func TestParseArgoCDSettings_Realistic(t *testing.T) {
	s, err := LoadFile("testdata/argocd-cm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.HealthOverrides) != 3 || s.HealthOverrides["ec2.aws.crossplane.io/*"] == "" || s.HealthOverrides["cert-manager.io/Certificate"] == "" || s.HealthOverrides["ConfigMap"] == "" {
		t.Fatalf("health overrides %v", keysOf(s.HealthOverrides))
	}
	if d := s.Actions["apps/Deployment"]; !d.MergeBuiltinActions || len(d.Actions) != 1 || d.Actions[0].Name != "label" {
		t.Fatalf("actions %+v", s.Actions)
	}
	// ignoreAggregatedRoles is diff's own option, not an ignore rule.
	if !s.IgnoreAggregatedRoles {
		t.Fatal("resource.compareoptions ignoreAggregatedRoles not read")
	}
	wantIgnore := []string{"*/*", "admissionregistration.k8s.io/MutatingWebhookConfiguration", "apps/Deployment"}
	var gotIgnore []string
	for _, r := range s.IgnoreDifferences {
		gotIgnore = append(gotIgnore, r.Group+"/"+r.Kind)
	}
	slices.Sort(gotIgnore)
	if !slices.Equal(gotIgnore, wantIgnore) {
		t.Fatalf("ignore rules %v", gotIgnore)
	}
	if s.Reconciliation != 2*time.Minute || s.Jitter != 30*time.Second || s.RespectRBAC != "normal" || s.TrackingMethod != "annotation" {
		t.Fatalf("settings %+v", s)
	}
	if len(s.Exclusions) != 8 {
		t.Fatalf("exclusions %v", s.Exclusions)
	}
	for _, w := range []string{"url", "admin.enabled", "statusbadge.enabled", "users.anonymous.enabled"} {
		if !slices.ContainsFunc(s.Warnings, func(x string) bool { return strings.Contains(x, " "+w+":") }) {
			t.Errorf("no warning for %s in %v", w, s.Warnings)
		}
	}
	opts := gitops.DefaultOptions()
	if err := s.Apply(&opts); err != nil {
		t.Fatal(err)
	}
	f := opts.Cache.Filter
	for _, gk := range []schema.GroupKind{{Kind: "Endpoints"}, {Group: "discovery.k8s.io", Kind: "EndpointSlice"}, {Group: "coordination.k8s.io", Kind: "Lease"}, {Group: "policy.cilium.io", Kind: "CiliumNetworkPolicy"}} {
		if f.Allows(gk) {
			t.Errorf("%v allowed", gk)
		}
	}
	if !f.Allows(schema.GroupKind{Kind: "ConfigMap"}) || !f.Allows(schema.GroupKind{Group: "apps", Kind: "Deployment"}) {
		t.Error("a kind not excluded is filtered out")
	}
	if opts.Interval != 2*time.Minute || opts.Jitter != 30*time.Second || opts.Cache.RespectRBAC || opts.Tracking.AnnotationKey != resource.AnnotationArgoTrackingID ||
		opts.Health == nil || opts.Actions == nil || len(opts.IgnoreDifferences) != 3 || !opts.IgnoreAggregatedRoles {
		t.Fatalf("options not applied: interval %v jitter %v rbac %v tracking %q", opts.Interval, opts.Jitter, opts.Cache.RespectRBAC, opts.Tracking.AnnotationKey)
	}
}

func keysOf(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestParseArgoCDSettings_RefusesWhatItCannotDo(t *testing.T) {
	cases := map[string]struct {
		data map[string]string
		want error
	}{
		"knownTypeFields without a type": {map[string]string{"resource.customizations.knownTypeFields.argoproj.io_Rollout": "- field: spec.template.spec\n"}, ErrMalformed},
		"bad instance label":             {map[string]string{"application.instanceLabelKey": "not a label"}, ErrMalformed},
		"empty cluster pattern":          {map[string]string{"resource.exclusions": "- apiGroups: ['']\n  kinds: [Secret]\n  clusters: ['']\n"}, ErrMalformed},
		"bad hard timeout":               {map[string]string{"timeout.hard.reconciliation": "-5m"}, ErrMalformed},
		"bad ignore updates":             {map[string]string{"resource.customizations.ignoreResourceUpdates.apps_Deployment": "jsonPointer: [/status]\n"}, ErrMalformed},
		"bad updates switch":             {map[string]string{"resource.ignoreResourceUpdatesEnabled": "maybe"}, ErrMalformed},
		"bad compare option":             {map[string]string{"resource.compareoptions": "ignoreDifferencesOnResourceUpdates: perhaps\n"}, ErrMalformed},
		"bad duration":                   {map[string]string{"timeout.reconciliation": "soon"}, ErrMalformed},
		"bad yaml":                       {map[string]string{"resource.exclusions": "- apiGroups: [\n"}, ErrMalformed},
		"unknown ignore field":           {map[string]string{"resource.customizations.ignoreDifferences.all": "jsonPointer: [/x]\n"}, ErrMalformed},
		"bad rbac":                       {map[string]string{"resource.respectRBAC": "sometimes"}, ErrMalformed},
		"bad actions":                    {map[string]string{"resource.customizations.actions.apps_Deployment": "definitions: []\n"}, ErrMalformed},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(c.data)
			var se *SettingError
			if !errors.Is(err, c.want) || !errors.As(err, &se) {
				t.Fatalf("want %v in a *SettingError, got %v", c.want, err)
			}
			for k := range c.data {
				if !strings.Contains(err.Error(), k) {
					t.Errorf("error does not name the key %s: %v", k, err)
				}
			}
		})
	}
}

func TestParseArgoCDSettings_LegacyForm(t *testing.T) {
	s, err := Parse(map[string]string{"resource.customizations": `
apps/Deployment:
  health.lua: |
    return {status = "Healthy"}
  ignoreDifferences: |
    jsonPointers: [/spec/replicas]
  ignoreResourceUpdates: |
    jsonPointers: [/spec/paused]
`, "resource.ignoreResourceUpdatesEnabled": "true", "resource.customizations.ignoreResourceUpdates.all": "jsonPointers: [/status]\n"})
	if err != nil {
		t.Fatal(err)
	}
	if s.HealthOverrides["apps/Deployment"] == "" || len(s.IgnoreDifferences) != 1 || s.IgnoreDifferences[0].Group != "apps" {
		t.Fatalf("%+v", s)
	}
	legacy := slices.ContainsFunc(s.IgnoreResourceUpdates, func(r engine.ResourceIgnoreDifferences) bool {
		return r.Group == "apps" && r.Kind == "Deployment" && slices.Equal(r.JSONPointers, []string{"/spec/paused"})
	})
	if !legacy {
		t.Fatalf("the legacy form's ignoreResourceUpdates is not among %+v", s.IgnoreResourceUpdates)
	}
	opts := gitops.DefaultOptions()
	opts.Cache = cache.DefaultOptions()
	if err := s.Apply(&opts); err != nil || len(opts.IgnoreResourceUpdates) != len(s.IgnoreResourceUpdates) {
		t.Fatalf("apply: %v", err)
	}
}

func TestArgoCDSettingsTrackingMethod(t *testing.T) {
	s, err := Parse(map[string]string{"application.resourceTrackingMethod": "annotation+label", "application.instanceLabelKey": "example.com/app"})
	if err != nil {
		t.Fatal(err)
	}
	opts := gitops.DefaultOptions()
	if err := s.Apply(&opts); err != nil {
		t.Fatal(err)
	}
	if opts.Tracking.Method != resource.TrackingAnnotationAndLabel || opts.Tracking.AnnotationKey != resource.AnnotationArgoTrackingID || opts.Tracking.LabelKey != "example.com/app" {
		t.Fatalf("tracking %+v", opts.Tracking)
	}
}

func TestArgoCDSettingsOpenLibsRunInTheSandbox(t *testing.T) {
	s, err := Parse(map[string]string{
		"resource.customizations.useOpenLibs.apps_Deployment": "true",
		"resource.customizations.health.apps_Deployment":      "return {status = os.date('!%Y', 0) == '1970' and 'Healthy' or 'Degraded'}",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "sandbox") {
		t.Fatalf("warnings %v", s.Warnings)
	}
	if _, err := Parse(map[string]string{"resource.customizations.useOpenLibs.apps_Deployment": "maybe"}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("a malformed boolean: %v", err)
	}
}

func TestArgoCDSettingsKnownTypeFields(t *testing.T) {
	s, err := Parse(map[string]string{"resource.customizations.knownTypeFields.argoproj.io_Rollout": "- field: spec.template.spec\n  type: core/v1/PodSpec\n"})
	if err != nil {
		t.Fatal(err)
	}
	opts := gitops.DefaultOptions()
	if err := s.Apply(&opts); err != nil {
		t.Fatal(err)
	}
	if len(opts.KnownTypeFields) != 1 || opts.KnownTypeFields[0].Group != "argoproj.io" || opts.KnownTypeFields[0].Kind != "Rollout" || opts.KnownTypeFields[0].Type != "core/v1/PodSpec" {
		t.Fatalf("known type fields %+v", opts.KnownTypeFields)
	}
	s, err = Parse(map[string]string{"resource.customizations.knownTypeFields.argoproj.io_Rollout": "- field: spec.x\n  type: core/v1/Nope\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(&opts); err == nil || !strings.Contains(err.Error(), "core/v1/Nope") {
		t.Fatalf("an unknown type: %v", err)
	}
}

func TestArgoCDSettingsReconciliationZeroTurnsTimersOff(t *testing.T) {
	s, err := Parse(map[string]string{"timeout.reconciliation": "0"})
	if err != nil {
		t.Fatal(err)
	}
	opts := gitops.DefaultOptions()
	if err := s.Apply(&opts); err != nil {
		t.Fatal(err)
	}
	if opts.Interval >= 0 {
		t.Fatalf("interval %s, want negative (off)", opts.Interval)
	}
}

func TestArgoCDSettingsIgnoreResourceStatusField(t *testing.T) {
	for value, want := range map[string]engine.CompareStatusMode{"all": engine.CompareStatusNone, "crd": engine.CompareStatusAll, "none": engine.CompareStatusAll} {
		s, err := Parse(map[string]string{"resource.compareoptions": "ignoreResourceStatusField: " + value + "\n"})
		if err != nil {
			t.Fatal(err)
		}
		opts := gitops.DefaultOptions()
		if err := s.Apply(&opts); err != nil {
			t.Fatal(err)
		}
		if opts.CompareStatus != want || (value == "crd") != (len(opts.IgnoreStatus) == 1) {
			t.Errorf("%s: compare %q ignore %v", value, opts.CompareStatus, opts.IgnoreStatus)
		}
	}
}
