package diff

import (
	"fmt"
	"path"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// IgnoreRule is one ignoreDifferences entry: which objects it applies to and
// which of their fields are never compared, displayed as changed or
// written by the patch.
//
// Selectors are glob patterns (path.Match syntax). Group "*" matches any
// group and "" only the core group, as in Argo CD; an empty Kind, Name or
// Namespace matches any.
type IgnoreRule struct {
	// Group is the objects' API group pattern: "*" any, "" the core group.
	Group string
	// Kind is the objects' kind pattern; empty matches any.
	Kind string
	// Name is the objects' name pattern; empty matches any.
	Name string
	// Namespace is the objects' namespace pattern; empty matches any.
	Namespace string
	// JSONPointers are RFC 6901 pointers, for example "/spec/replicas".
	JSONPointers []string
	// JQPathExpressions are jq path expressions evaluated on each object,
	// for example `.spec.template.spec.containers[] | select(.name ==
	// "istio-proxy")`. Each is compiled once, when the Differ is built, as
	// path(EXPR); every path it yields is ignored. An evaluation error or a
	// timeout (Options.JQTimeout) fails the diff of that object with a
	// *RuleError: a rule that cannot be evaluated never silently ignores
	// or compares.
	JQPathExpressions []string
	// ManagedFieldsManagers: fields owned by these managers in the live
	// object's managedFields are ignored. Needs the live object's
	// managedFields (a cluster cache that strips them defeats this rule).
	ManagedFieldsManagers []string
}

// RuleError reports an ignore rule that could not be compiled or evaluated.
type RuleError struct {
	// Rule is the index of the rule: system rules first, then the
	// application's.
	Rule int
	// Expression is the pointer or jq expression at fault.
	Expression string
	// Err is the cause.
	Err error
}

// Error implements error.
func (e *RuleError) Error() string {
	return fmt.Sprintf("ignore rule %d: %q: %v", e.Rule, e.Expression, e.Err)
}

// Unwrap returns the cause.
func (e *RuleError) Unwrap() error { return e.Err }

type compiledRule struct {
	index                 int
	group, kind, name, ns string
	pointers              []fieldPath
	pointerText           []string
	jq                    []*jqRule
	managers              []string
}

func compileRules(rules []IgnoreRule, first int, cache *RuleCache) ([]*compiledRule, error) {
	out := make([]*compiledRule, 0, len(rules))
	for i, r := range rules {
		idx := first + i
		cr := &compiledRule{index: idx, group: r.Group, kind: r.Kind, name: r.Name, ns: r.Namespace, managers: r.ManagedFieldsManagers}
		for _, pat := range []string{r.Group, r.Kind, r.Name, r.Namespace} {
			if _, err := path.Match(pat, ""); err != nil {
				return nil, &RuleError{Rule: idx, Expression: pat, Err: err}
			}
		}
		for _, p := range r.JSONPointers {
			toks, ok := splitPointer(p)
			if !ok || len(toks) == 0 {
				return nil, &RuleError{Rule: idx, Expression: p, Err: fmt.Errorf("not a JSON pointer to a field")}
			}
			cr.pointers = append(cr.pointers, toks)
			cr.pointerText = append(cr.pointerText, p)
		}
		for _, expr := range r.JQPathExpressions {
			q, err := cache.compile(expr)
			if err != nil {
				return nil, &RuleError{Rule: idx, Expression: expr, Err: err}
			}
			cr.jq = append(cr.jq, q)
		}
		out = append(out, cr)
	}
	return out, nil
}

// matches reports whether the rule applies to an object of kind gk named
// ns/name.
func (r *compiledRule) matches(gk schema.GroupKind, ns, name string) bool {
	return globGroup(r.group, gk.Group) && globAny(r.kind, gk.Kind) && globAny(r.name, name) && globAny(r.ns, ns)
}

func globGroup(pattern, group string) bool {
	if pattern == "" {
		return group == ""
	}
	ok, _ := path.Match(pattern, group)
	return ok
}

func globAny(pattern, s string) bool {
	if pattern == "" || pattern == "*" {
		return true
	}
	ok, _ := path.Match(pattern, s)
	return ok
}
