package argocdcm

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/health/actions"
	"github.com/kubegitops/gitops/render/builtin"
)

// ConfigMapName is the name of Argo CD's settings ConfigMap.
const ConfigMapName = "argocd-cm"

// Sentinel errors wrapped by *SettingError.
var (
	// ErrMalformed: the value cannot be parsed.
	ErrMalformed = errors.New("malformed value")
	// ErrUnsupported: the engine cannot do what the value asks
	// (it is refused rather than silently ignored).
	ErrUnsupported = errors.New("not supported by this engine")
)

// SettingError reports an argocd-cm (or argocd-cmd-params-cm) key whose
// value is malformed or asks for something the engine does not do.
type SettingError struct {
	// ConfigMap is the ConfigMap's name; empty means argocd-cm.
	ConfigMap string
	// Key is the ConfigMap's key.
	Key string
	// Err wraps ErrMalformed or ErrUnsupported.
	Err error
}

// Error implements error.
func (e *SettingError) Error() string {
	cm := e.ConfigMap
	if cm == "" {
		cm = ConfigMapName
	}
	return fmt.Sprintf("%s %s: %v", cm, e.Key, e.Err)
}

// Unwrap returns Err.
func (e *SettingError) Unwrap() error { return e.Err }

// Settings are the settings of an argocd-cm ConfigMap this engine
// implements, parsed by Parse and put into engine options by
// Apply. Zero fields were not set.
type Settings struct {
	// Hydrator are the source hydrator's keys (a host running package
	// hydrator reads them).
	Hydrator HydratorSettings
	// HealthOverrides are resource.customizations.health.<group_Kind>
	// scripts (and the legacy resource.customizations form), keyed by
	// health.ScriptKey.
	HealthOverrides map[string]string
	// Actions are resource.customizations.actions.<group_Kind>.
	Actions map[string]actions.Definitions
	// IgnoreDifferences are resource.customizations.ignoreDifferences.
	// <group_Kind> and .all.
	IgnoreDifferences []engine.ResourceIgnoreDifferences
	// IgnoreAggregatedRoles is resource.compareoptions'
	// ignoreAggregatedRoles (Options.IgnoreAggregatedRoles).
	IgnoreAggregatedRoles bool
	// KnownTypeFields are resource.customizations.knownTypeFields: fields
	// of custom resources normalised as built-in types.
	KnownTypeFields []diff.KnownTypeField
	// Exclusions and Inclusions are resource.exclusions and
	// resource.inclusions, one match per apiGroup and kind, limited to the
	// entry's clusters (globs over server URLs) when it names any.
	Exclusions, Inclusions []cache.GroupKindMatch
	// Reconciliation is timeout.reconciliation; zero when not set,
	// negative when it is 0 (periodic refreshes off).
	Reconciliation time.Duration
	// Jitter is timeout.reconciliation.jitter as Options.Jitter spells it
	// (negative for none); zero when not set.
	Jitter time.Duration
	// HardReconciliation is timeout.hard.reconciliation: how often each
	// app gets a hard refresh (Options.HardInterval); zero when not set
	// or 0 (off, Argo CD's default).
	HardReconciliation time.Duration
	// RespectRBAC is resource.respectRBAC: "strict" or "normal", or "".
	RespectRBAC string
	// TrackingMethod is application.resourceTrackingMethod, or "".
	TrackingMethod string
	// IgnoreResourceStatusField is resource.compareoptions'
	// ignoreResourceStatusField: "all" (or "") ignores every status, "crd"
	// only CustomResourceDefinitions', "none" (or "off") none.
	IgnoreResourceStatusField string
	// InstanceLabelKey is application.instanceLabelKey (the label of the
	// label tracking methods), or "".
	InstanceLabelKey string
	// IgnoreResourceUpdates are the ignoreResourceUpdates rules
	// (Options.IgnoreResourceUpdates), sorted by key: Argo CD 3's
	// defaults (engine.DefaultIgnoreResourceUpdates), each replaced by the
	// argocd-cm key of the same kind when there is one
	// (resource.customizations.ignoreResourceUpdates.<group_Kind> or .all,
	// which wins over the legacy resource.customizations form), then, as
	// resource.compareoptions' ignoreDifferencesOnResourceUpdates (default
	// true) asks, the ignoreDifferences customisations. Nil when
	// resource.ignoreResourceUpdatesEnabled is false (default true).
	IgnoreResourceUpdates []engine.ResourceIgnoreDifferences
	// InstallationID is installationID: the instance id of the tracking
	// (Options.Tracking.InstanceID), or "".
	InstallationID string
	// InClusterEnabled is cluster.inClusterEnabled, nil when not set
	// (true): false takes the cluster the host runs in out of the
	// destinations (a host reads it; Apply does not).
	InClusterEnabled *bool
	// Impersonation is application.sync.impersonation.enabled and
	// .enforced (Options.Impersonation): ImpersonationOff unless enabled,
	// as in Argo CD.
	Impersonation engine.ImpersonationMode
	// Tools are the options of the built-in renderers: Argo CD's defaults
	// (ArgoCDTools) with kustomize.buildOptions and helm.valuesFileSchemes
	// (Options.Toolkit). Nil in Settings not made by Parse or ParsePartial.
	Tools *builtin.Options
	// Ignored are the keys set that set nothing here (SettingKeys:
	// another component's; not implemented, for any value), and keys no
	// entry names, sorted by key.
	Ignored []Ignored
	// Warnings say what the engine does with keys it does not apply as
	// Argo CD does: Ignored's notes and the sandbox's libraries of
	// useOpenLibs, one line each, sorted.
	Warnings []string

	// Parse state: ignoreResourceUpdates rules by normalised kind key,
	// from the keys and from the legacy form; the ignoreDifferences
	// customisations; ignoreDifferencesOnResourceUpdates when set.
	updateRules, legacyUpdateRules map[string]engine.ResourceIgnoreDifferences
	customIgnores                  []engine.ResourceIgnoreDifferences
	ignoreDiffsOnUpdates           *bool
}

// Parse reads the data of an argocd-cm ConfigMap. Keys the
// engine implements are parsed (see Settings); keys it does not use
// are listed in Warnings. A malformed value (or one asking for what the
// engine cannot do, ErrUnsupported) is a *SettingError naming the
// key; all of them are returned, joined, and no settings.
func Parse(data map[string]string) (*Settings, error) {
	s, err := ParsePartial(data)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// ParsePartial is Parse for a host that keeps
// running on bad input (the operator): it returns the settings of every
// key that parsed together with the *SettingErrors of the others, joined,
// so that one malformed key leaves the rest in force. The settings are
// never nil.
func ParsePartial(data map[string]string) (*Settings, error) {
	tools := ArgoCDTools()
	s := &Settings{HealthOverrides: map[string]string{}, Actions: map[string]actions.Definitions{}, Tools: &tools,
		Impersonation: engine.ImpersonationOff,
		updateRules:   map[string]engine.ResourceIgnoreDifferences{}, legacyUpdateRules: map[string]engine.ResourceIgnoreDifferences{}}
	var errs []error
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ignoreUpdatesEnabled := true // Argo CD 3's default
	var impersonate, enforce *bool
	kustomizeBins := newKustomizeBinaries()
	for _, key := range keys {
		value := data[key]
		var err error
		switch {
		case key == customizations:
			err = s.parseLegacy(value)
		case strings.HasPrefix(key, customizations+".health."):
			s.HealthOverrides[health.ScriptKey(strings.TrimPrefix(key, customizations+".health."))] = value
		case strings.HasPrefix(key, customizations+".useOpenLibs."):
			var open bool
			if open, err = parseBool(value); err == nil && open {
				s.Warnings = append(s.Warnings, openLibsWarning(key))
			}
		case strings.HasPrefix(key, customizations+".actions."):
			err = s.addActions(health.ScriptKey(strings.TrimPrefix(key, customizations+".actions.")), value)
		case strings.HasPrefix(key, customizations+".ignoreDifferences."):
			err = s.addIgnore(strings.TrimPrefix(key, customizations+".ignoreDifferences."), value)
		case strings.HasPrefix(key, customizations+".knownTypeFields."):
			var fields []knownTypeField
			if err = strictYAML(value, &fields); err == nil {
				err = s.addKnownTypes(strings.TrimPrefix(key, customizations+".knownTypeFields."), fields)
			}
		case strings.HasPrefix(key, customizations+".ignoreResourceUpdates."):
			err = addUpdateRule(s.updateRules, strings.TrimPrefix(key, customizations+".ignoreResourceUpdates."), value)
		case key == "resource.ignoreResourceUpdatesEnabled":
			ignoreUpdatesEnabled, err = parseBool(value)
			if strings.TrimSpace(value) == "" {
				ignoreUpdatesEnabled = true
			}
		case hydratorKeys[key]:
			s.Hydrator.set(key, value)
		case key == "resource.exclusions":
			s.Exclusions, err = parseFilter(value)
		case key == "resource.inclusions":
			s.Inclusions, err = parseFilter(value)
		case key == "resource.compareoptions":
			err = s.parseCompareOptions(value)
		case key == "timeout.reconciliation":
			s.Reconciliation, err = parseDuration(value)
			if err == nil && s.Reconciliation == 0 {
				s.Reconciliation = -1 // 0 turns periodic refreshes off (Options.Interval < 0)
			}
		case key == "timeout.reconciliation.jitter":
			s.Jitter, err = parseDuration(value)
			if err == nil && s.Jitter == 0 {
				s.Jitter = -1
			}
		case key == "timeout.hard.reconciliation":
			s.HardReconciliation, err = parseDuration(value)
		case key == "resource.respectRBAC":
			switch v := strings.TrimSpace(value); v {
			case "strict", "normal", "":
				s.RespectRBAC = v
			default:
				err = fmt.Errorf("%w: %q, want strict or normal", ErrMalformed, v)
			}
		case key == "application.instanceLabelKey":
			v := strings.TrimSpace(value)
			if msgs := validation.IsQualifiedName(v); len(msgs) > 0 {
				err = fmt.Errorf("%w: %q: %s", ErrMalformed, v, strings.Join(msgs, "; "))
			} else {
				s.InstanceLabelKey = v
			}
		case key == "application.resourceTrackingMethod":
			switch v := strings.TrimSpace(value); v {
			case "annotation", "label", "annotation+label", "":
				s.TrackingMethod = v
			default:
				err = fmt.Errorf("%w: %q, want annotation, label or annotation+label", ErrMalformed, v)
			}
		case key == "installationID":
			s.InstallationID = strings.TrimSpace(value)
		case key == "cluster.inClusterEnabled":
			var b bool
			if b, err = parseBool(value); err == nil && strings.TrimSpace(value) != "" {
				s.InClusterEnabled = &b
			}
		case key == "application.sync.impersonation.enabled":
			var b bool
			if b, err = parseBool(value); err == nil {
				impersonate = &b
			}
		case key == "application.sync.impersonation.enforced":
			var b bool
			if b, err = parseBool(value); err == nil && strings.TrimSpace(value) != "" {
				enforce = &b
			}
		case key == "kustomize.buildOptions":
			err = parseKustomizeBuildOptions(value, &s.Tools.Kustomize)
			kustomizeBins.global = value
		case strings.HasPrefix(key, "kustomize.version."), strings.HasPrefix(key, "kustomize.path."):
			err = kustomizeBins.add(key, value)
		case strings.HasPrefix(key, "kustomize.buildOptions."):
			kustomizeBins.options[strings.TrimPrefix(key, "kustomize.buildOptions.")] = value
		case key == "helm.valuesFileSchemes":
			err = parseValuesFileSchemes(value, &s.Tools.Helm)
		default:
			err = s.other(key, value)
		}
		if err != nil {
			errs = append(errs, &SettingError{Key: key, Err: err})
		}
	}
	if ignoreUpdatesEnabled {
		s.resolveUpdateRules()
	}
	s.Tools.Kustomize.Versions = kustomizeBins.resolve()
	s.Warnings = append(s.Warnings, kustomizeBins.warnings()...)
	if impersonate != nil && *impersonate {
		// Argo CD enforces a service account unless told not to.
		s.Impersonation = engine.ImpersonationEnforced
		if enforce != nil && !*enforce {
			s.Impersonation = engine.ImpersonateWhenNamed
		}
	}
	for _, ig := range s.Ignored {
		s.Warnings = append(s.Warnings, ig.Entry.Note(ConfigMapName, ig.Key))
	}
	slices.Sort(s.Warnings)
	return s, errors.Join(errs...)
}

// other reads a key the switch of ParsePartial does not: the table says
// whether it is another component's (Ignored), or not implemented (a value
// other than the one this module behaves as is ErrUnsupported; with any
// value, Ignored); a key the table does not know is Ignored too.
func (s *Settings) other(key, value string) error {
	entry, ok := LookupSetting(key)
	if !ok {
		s.Ignored = append(s.Ignored, Ignored{Key: key, Entry: Key{Name: key, Use: UseMeaningless,
			Effect: "not an Argo CD setting this program knows"}})
		return nil
	}
	v := strings.TrimSpace(value)
	switch {
	case entry.Use == UseNotImplemented && entry.Same != "":
		if v != "" && v != entry.Same {
			return fmt.Errorf("%w: %q: %s", ErrUnsupported, v, entry.Effect)
		}
	case entry.Use == UseNotImplemented && v == "":
	default:
		s.Ignored = append(s.Ignored, Ignored{Key: key, Entry: entry})
	}
	return nil
}
