package health

import (
	"errors"
	"fmt"
	"maps"
)

// ErrNotDefaultChecker is wrapped by WithOverrides' error for a Checker
// that is not a *DefaultChecker: Lua overrides can be added only to a
// checker that runs them.
var ErrNotDefaultChecker = errors.New("the checker runs no Lua overrides (it is not a *health.DefaultChecker)")

// MergeOverrides combines two sets of Lua overrides into one keyed by
// ScriptKey, so that "group_Kind" and "group/Kind" name the same kind: a
// kind only one set gives keeps its script, and on a kind both give,
// top's wins. Neither argument is changed.
func MergeOverrides(base, top map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(top))
	for _, m := range []map[string]string{base, top} {
		for k, v := range m {
			out[ScriptKey(k)] = v
		}
	}
	return out
}

// Options returns the options c was built with (a copy).
func (c *DefaultChecker) Options() Options {
	o := c.opts
	o.Overrides, o.Checks = maps.Clone(o.Overrides), maps.Clone(o.Checks)
	return o
}

// WithOverrides returns a checker that judges as c does with overrides
// added to its own (MergeOverrides): on a kind both give a script for, the
// given overrides win. c itself is not changed.
func (c *DefaultChecker) WithOverrides(overrides map[string]string) (*DefaultChecker, error) {
	opts := c.Options()
	opts.Overrides = MergeOverrides(opts.Overrides, overrides)
	return NewChecker(opts)
}

// WithOverrides adds Lua overrides to a checker: to c's own when c is a
// *DefaultChecker (see its WithOverrides), to a default checker's when c
// is nil. Any other Checker is refused with an error wrapping
// ErrNotDefaultChecker that names its type, since it would not run them.
// This is how argocd-cm's resource.customizations.health.* join a host's
// own overrides: Argo CD's argocd-cm customizations win over the scripts
// it ships, and here over the host's on the same kind.
func WithOverrides(c Checker, overrides map[string]string) (Checker, error) {
	switch dc := c.(type) {
	case nil:
		opts := DefaultOptions()
		opts.Overrides = MergeOverrides(nil, overrides)
		return NewChecker(opts)
	case *DefaultChecker:
		if dc == nil {
			return WithOverrides(nil, overrides)
		}
		return dc.WithOverrides(overrides)
	default:
		return nil, fmt.Errorf("health: adding overrides to a %T: %w", c, ErrNotDefaultChecker)
	}
}
