package argocdcm

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/health/actions"
)

// ignoreFields is the YAML of an ignoreDifferences customisation.
type ignoreFields struct {
	JSONPointers          []string `json:"jsonPointers,omitempty"`
	JQPathExpressions     []string `json:"jqPathExpressions,omitempty"`
	ManagedFieldsManagers []string `json:"managedFieldsManagers,omitempty"`
}

// filterEntry is one entry of resource.exclusions / resource.inclusions.
type filterEntry struct {
	APIGroups []string `json:"apiGroups"`
	Kinds     []string `json:"kinds"`
	Clusters  []string `json:"clusters,omitempty"`
}

// compareOptions is resource.compareoptions.
type compareOptions struct {
	IgnoreAggregatedRoles              bool   `json:"ignoreAggregatedRoles,omitempty"`
	IgnoreResourceStatusField          string `json:"ignoreResourceStatusField,omitempty"`
	IgnoreDifferencesOnResourceUpdates *bool  `json:"ignoreDifferencesOnResourceUpdates,omitempty"`
}

// legacyCustomization is one kind's entry of the legacy
// resource.customizations key.
type legacyCustomization struct {
	HealthLua             string           `json:"health.lua,omitempty"`
	UseOpenLibs           bool             `json:"health.lua.useOpenLibs,omitempty"`
	Actions               string           `json:"actions,omitempty"`
	IgnoreDifferences     string           `json:"ignoreDifferences,omitempty"`
	IgnoreResourceUpdates string           `json:"ignoreResourceUpdates,omitempty"`
	KnownTypeFields       []knownTypeField `json:"knownTypeFields,omitempty"`
}

// knownTypeField is one entry of knownTypeFields.
type knownTypeField struct {
	Field string `json:"field"`
	Type  string `json:"type"`
}

const customizations = "resource.customizations"

func (s *Settings) parseLegacy(value string) error {
	var m map[string]legacyCustomization
	if err := strictYAML(value, &m); err != nil {
		return err
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		c := m[name]
		key := health.ScriptKey(name)
		if c.UseOpenLibs {
			s.Warnings = append(s.Warnings, openLibsWarning(customizations+" "+name+" health.lua.useOpenLibs"))
		}
		if len(c.KnownTypeFields) > 0 {
			if err := s.addKnownTypes(name, c.KnownTypeFields); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		if c.IgnoreResourceUpdates != "" {
			if err := addUpdateRule(s.legacyUpdateRules, strings.Replace(name, "/", "_", 1), c.IgnoreResourceUpdates); err != nil {
				return fmt.Errorf("%s: ignoreResourceUpdates: %w", name, err)
			}
		}
		if c.HealthLua != "" {
			s.HealthOverrides[key] = c.HealthLua
		}
		if c.Actions != "" {
			if err := s.addActions(key, c.Actions); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		if c.IgnoreDifferences != "" {
			if err := s.addIgnore(strings.Replace(name, "/", "_", 1), c.IgnoreDifferences); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	return nil
}

// openLibsWarning says what useOpenLibs: true means here: every script
// runs in the sandbox, whose libraries (string, table, math, os.time,
// os.date, os.clock) are what Argo CD's scripts use; a script that calls
// what the sandbox leaves out (io, os.execute, os.getenv, require of a
// file) fails with an error naming the function, never silently.
func openLibsWarning(key string) string {
	return fmt.Sprintf("argocd-cm %s: scripts run in the sandbox: string, table, math, os.time, os.date and os.clock are there; io, os.execute and file loading raise an error", key)
}

func (s *Settings) addActions(key, value string) error {
	d, err := actions.ParseDefinitions(key, value)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	s.Actions[key] = d
	return nil
}

// addIgnore adds an ignoreDifferences customisation; kindKey is
// "group_Kind", "Kind" or "all".
func (s *Settings) addIgnore(kindKey, value string) error {
	_, rule, err := parseIgnoreRule(kindKey, value)
	if err != nil {
		return err
	}
	s.IgnoreDifferences = append(s.IgnoreDifferences, rule)
	s.customIgnores = append(s.customIgnores, rule)
	return nil
}

// parseIgnoreRule reads the fields of an ignoreDifferences or
// ignoreResourceUpdates customisation for kindKey ("group_Kind", "Kind"
// or "all"), and returns the normalised key ("group/Kind", "Kind" or
// "all") with the rule.
func parseIgnoreRule(kindKey, value string) (string, engine.ResourceIgnoreDifferences, error) {
	var f ignoreFields
	if err := strictYAML(value, &f); err != nil {
		return "", engine.ResourceIgnoreDifferences{}, err
	}
	rule := engine.ResourceIgnoreDifferences{Group: "*", Kind: "*"}
	key := "all"
	if kindKey != "all" {
		key = health.ScriptKey(kindKey)
		rule.Group, rule.Kind = "", key
		if g, k, ok := strings.Cut(key, "/"); ok {
			rule.Group, rule.Kind = g, k
		}
	}
	rule.JSONPointers, rule.JQPathExpressions, rule.ManagedFieldsManagers = f.JSONPointers, f.JQPathExpressions, f.ManagedFieldsManagers
	return key, rule, nil
}

// addUpdateRule records an ignoreResourceUpdates customisation by its
// normalised kind key.
func addUpdateRule(into map[string]engine.ResourceIgnoreDifferences, kindKey, value string) error {
	key, rule, err := parseIgnoreRule(kindKey, value)
	if err != nil {
		return err
	}
	into[key] = rule
	return nil
}

// resolveUpdateRules builds IgnoreResourceUpdates: the defaults, each
// replaced by the legacy form's rule of its kind and then by the key's,
// sorted by kind key, then the ignoreDifferences customisations unless
// ignoreDifferencesOnResourceUpdates is false.
func (s *Settings) resolveUpdateRules() {
	byKey := map[string]engine.ResourceIgnoreDifferences{}
	for k, r := range engine.DefaultIgnoreResourceUpdates() {
		if k != "all" {
			k = health.ScriptKey(k)
		}
		byKey[k] = r
	}
	maps.Copy(byKey, s.legacyUpdateRules)
	maps.Copy(byKey, s.updateRules)
	keys := slices.Sorted(maps.Keys(byKey))
	s.IgnoreResourceUpdates = make([]engine.ResourceIgnoreDifferences, 0, len(keys)+len(s.customIgnores))
	for _, k := range keys {
		s.IgnoreResourceUpdates = append(s.IgnoreResourceUpdates, byKey[k])
	}
	if s.ignoreDiffsOnUpdates == nil || *s.ignoreDiffsOnUpdates {
		s.IgnoreResourceUpdates = append(s.IgnoreResourceUpdates, s.customIgnores...)
	}
}

// addKnownTypes records knownTypeFields for a kind ("group_Kind" or
// "group/Kind"); a type the diff does not know is refused by Apply.
func (s *Settings) addKnownTypes(kindKey string, fields []knownTypeField) error {
	sk := health.ScriptKey(kindKey)
	group, kind := "", sk
	if g, k, ok := strings.Cut(sk, "/"); ok {
		group, kind = g, k
	}
	for _, f := range fields {
		if f.Field == "" || f.Type == "" {
			return fmt.Errorf("%w: knownTypeFields entries need a field and a type", ErrMalformed)
		}
		s.KnownTypeFields = append(s.KnownTypeFields, diff.KnownTypeField{Group: group, Kind: kind, Field: f.Field, Type: f.Type})
	}
	return nil
}

func (s *Settings) parseCompareOptions(value string) error {
	var c compareOptions
	if err := strictYAML(value, &c); err != nil {
		return err
	}
	switch c.IgnoreResourceStatusField {
	case "", "all", "crd", "none", "off":
		s.IgnoreResourceStatusField = c.IgnoreResourceStatusField
	default:
		return fmt.Errorf("%w: ignoreResourceStatusField %q, want all, crd or none", ErrMalformed, c.IgnoreResourceStatusField)
	}
	s.ignoreDiffsOnUpdates = c.IgnoreDifferencesOnResourceUpdates
	s.IgnoreAggregatedRoles = c.IgnoreAggregatedRoles
	return nil
}

func parseFilter(value string) ([]cache.GroupKindMatch, error) {
	var entries []filterEntry
	if err := strictYAML(value, &entries); err != nil {
		return nil, err
	}
	var out []cache.GroupKindMatch
	for i, e := range entries {
		if len(e.APIGroups) == 0 || len(e.Kinds) == 0 {
			return nil, fmt.Errorf("%w: entry %d needs apiGroups and kinds", ErrMalformed, i)
		}
		for _, c := range e.Clusters {
			if strings.TrimSpace(c) == "" {
				return nil, fmt.Errorf("%w: entry %d: an empty cluster pattern", ErrMalformed, i)
			}
		}
		for _, g := range e.APIGroups {
			for _, k := range e.Kinds {
				out = append(out, cache.GroupKindMatch{Group: g, Kind: k, Clusters: e.Clusters})
			}
		}
	}
	return out, nil
}
