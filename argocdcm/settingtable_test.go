package argocdcm

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/api/types"

	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/render/kustomize"
)

// TestSettingKeysCoverArgoCDDocs walks the docs' argocd-cm.yaml: every key
// has an entry in SettingKeys, and each that sets nothing here says why or
// whose it is.
func TestSettingKeysCoverArgoCDDocs(t *testing.T) {
	cm := docsConfigMap(t, "argocd-cm.yaml")
	for key := range cm.Data {
		k, ok := LookupSetting(key)
		if !ok {
			t.Errorf("%s: not in SettingKeys", key)
			continue
		}
		if k.Use == UseApplied && !k.Live {
			t.Errorf("%s: applied, but not live", key)
		}
		if k.Use != UseOtherComponent && k.Effect == "" {
			t.Errorf("%s: %s, without a word of what or why", key, k.Use)
		}
	}
}

// TestParseArgoCDDocsSettings parses the docs' argocd-cm.yaml as a user
// applies it (its resource.inclusions, which would watch one kind only,
// removed): every key applies or is named once, nothing is refused, and
// the documented values reach the options.
func TestParseArgoCDDocsSettings(t *testing.T) {
	cm := docsConfigMap(t, "argocd-cm.yaml")
	delete(cm.Data, "resource.inclusions")
	s, err := ParsePartial(cm.Data)
	if err != nil {
		t.Fatalf("argocd-cm.yaml: %v", err)
	}
	named := strings.Join(s.Warnings, "\n")
	for key := range cm.Data {
		k, _ := LookupSetting(key)
		isNamed := strings.Contains(named, "argocd-cm "+key+":")
		if k.Use != UseApplied && !isNamed && !(k.Use == UseNotImplemented && k.Same != "") {
			t.Errorf("%s (%s) not named", key, k.Use)
		}
		if k.Use == UseApplied && isNamed && !strings.Contains(key, "useOpenLibs") {
			t.Errorf("%s applied, yet named as ignored", key)
		}
	}
	for _, key := range []string{"url", "dex.config", "oidc.config", "ui.cssurl", "help.download.linux-amd64", "accounts.alice",
		"resource.customLabels", "resource.selectors"} {
		if !slices.ContainsFunc(s.Ignored, func(ig Ignored) bool { return ig.Key == key }) {
			t.Errorf("%s not in Ignored", key)
		}
	}
	// The docs' named kustomize binaries: v3.9.1 with its own build
	// options, the others with kustomize.buildOptions'.
	want := map[string]kustomize.Binary{
		"v3.9.1": {Path: "/custom-tools/kustomize_3_9", BuildOptions: []string{"--enable_kyaml", "true"}},
		"v3.5.1": {Path: "/custom-tools/kustomize_3_5_1", BuildOptions: []string{"--load_restrictor", "none"}},
		"v3.5.4": {Path: "/custom-tools/kustomize_3_5_4", BuildOptions: []string{"--load_restrictor", "none"}},
	}
	if got := s.Tools.Kustomize.Versions; !reflect.DeepEqual(got, want) {
		t.Errorf("kustomize versions %v, want %v", got, want)
	}
	if s.Hydrator.CommitMessageTemplate == "" {
		t.Error("sourceHydrator.commitMessageTemplate did not reach Settings.Hydrator")
	}
	if s.InstallationID != "my-unique-id" || s.InClusterEnabled == nil || !*s.InClusterEnabled || s.Impersonation != engine.ImpersonationOff ||
		s.Reconciliation != 2*time.Minute || s.Jitter != time.Minute || s.TrackingMethod != "annotation" || s.InstanceLabelKey != "mycompany.com/appname" {
		t.Errorf("settings %+v", s)
	}
	if s.Tools.Kustomize.LoadRestrictions != types.LoadRestrictionsNone || !slices.Equal(s.Tools.Helm.AllowedValueSchemes, []string{"http", "https"}) {
		t.Errorf("renderers' options %+v", s.Tools)
	}
	opts := Defaults()
	if err := s.Apply(&opts); err != nil {
		t.Fatal(err)
	}
	if opts.Tracking.InstanceID != "my-unique-id" || opts.Impersonation != engine.ImpersonationOff || opts.Toolkit == nil ||
		!slices.ContainsFunc(opts.Cache.Filter.Exclude, func(m cache.GroupKindMatch) bool {
			return m.Group == "repositories.stash.appscode.com" && m.Kind == "Snapshot" && slices.Equal(m.Clusters, []string{"*.local"})
		}) {
		t.Errorf("options: instance %q impersonation %q", opts.Tracking.InstanceID, opts.Impersonation)
	}
}

// TestSettingsImpersonation: application.sync.impersonation.enabled turns
// impersonation on, enforced unless .enforced says false.
func TestSettingsImpersonation(t *testing.T) {
	for _, c := range []struct {
		data map[string]string
		want engine.ImpersonationMode
	}{
		{nil, engine.ImpersonationOff},
		{map[string]string{"application.sync.impersonation.enabled": "true"}, engine.ImpersonationEnforced},
		{map[string]string{"application.sync.impersonation.enabled": "true", "application.sync.impersonation.enforced": "false"}, engine.ImpersonateWhenNamed},
		{map[string]string{"application.sync.impersonation.enforced": "false"}, engine.ImpersonationOff},
	} {
		s, err := ParsePartial(c.data)
		if err != nil || s.Impersonation != c.want {
			t.Errorf("%v: %q (%v), want %q", c.data, s.Impersonation, err, c.want)
		}
	}
}

// TestSettingsKustomizeBuildOptions: kustomize build's flags as Argo CD
// passes them, v3's spellings included; a flag whose behaviour this module
// does not have is refused by name.
func TestSettingsKustomizeBuildOptions(t *testing.T) {
	s, err := ParsePartial(map[string]string{"kustomize.buildOptions": "--load-restrictor=LoadRestrictionsNone --enable-helm --reorder legacy --enable-managedby-label"})
	if err != nil {
		t.Fatal(err)
	}
	if k := s.Tools.Kustomize; k.LoadRestrictions != types.LoadRestrictionsNone || k.Reorder != "legacy" || !k.AddManagedByLabel {
		t.Errorf("kustomize options %+v", k)
	}
	_, err = ParsePartial(map[string]string{"kustomize.buildOptions": "--enable-alpha-plugins", "helm.valuesFileSchemes": "s3"})
	errs := settingErrors(t, err)
	for _, key := range []string{"kustomize.buildOptions", "helm.valuesFileSchemes"} {
		if se := errs[key]; se == nil || !errors.Is(se, ErrUnsupported) {
			t.Errorf("%s: %v, want unsupported", key, se)
		}
	}
}

// TestKustomizeVersionsDuplicateAndUnused: a version registered by both
// spellings is Argo CD's duplicate error naming it; build options of a
// version no binary is registered for are named in a warning.
func TestKustomizeVersionsDuplicateAndUnused(t *testing.T) {
	s, err := ParsePartial(map[string]string{"kustomize.path.v5": "/a", "kustomize.version.v5": "/b", "kustomize.buildOptions.v9": "--reorder none"})
	var se *SettingError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "found duplicate kustomize version: v5") {
		t.Errorf("duplicate: %v, want Argo CD's duplicate error", err)
	}
	if !slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, "kustomize.buildOptions.v9 is used by no app") }) {
		t.Errorf("warnings %q do not name the unused build options", s.Warnings)
	}
}
