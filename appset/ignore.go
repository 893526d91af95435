package appset

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/diff"
)

// KeepIgnoredDifferences returns the Application a set writes over an
// existing one under spec.ignoreApplicationDifferences, as Argo CD's
// ApplicationSet controller does: generated, with every field the rules
// cover for this Application (a rule with a name applies to the
// Application of that name only; jsonPointers and jqPathExpressions as in
// ignoreDifferences) given its value in current, the Application as it is
// now, or left out when current lacks it. A nil current (an Application
// still to create) or a set without rules returns generated itself;
// neither argument is modified. Errors name the set and the Application.
func KeepIgnoredDifferences(ctx context.Context, set *ApplicationSet, generated, current *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	rules := set.Spec.IgnoreApplicationDifferences
	if len(rules) == 0 || current == nil || generated == nil {
		return generated, nil
	}
	d, err := ignoreDiffer(rules)
	if err != nil {
		return nil, &Error{Set: set.Name, Generator: -1, App: generated.GetName(), Err: fmt.Errorf("spec.ignoreApplicationDifferences: %w", err)}
	}
	out, err := d.KeepIgnored(ctx, generated, current)
	if err != nil {
		return nil, &Error{Set: set.Name, Generator: -1, App: generated.GetName(), Err: fmt.Errorf("spec.ignoreApplicationDifferences: %w", err)}
	}
	return out, nil
}

// ignoreDiffer compiles ignoreApplicationDifferences rules into a Differ
// whose only ignore rules they are.
func ignoreDiffer(rules []IgnoreDifference) (*diff.Differ, error) {
	irs := make([]diff.IgnoreRule, 0, len(rules))
	for _, r := range rules {
		irs = append(irs, diff.IgnoreRule{Group: "argoproj.io", Kind: "Application", Name: r.Name,
			JSONPointers: r.JSONPointers, JQPathExpressions: r.JQPathExpressions})
	}
	opts := diff.DefaultOptions()
	opts.SystemIgnoreRules = irs
	return diff.New(opts)
}
