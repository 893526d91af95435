package rbac

import (
	"encoding/csv"
	"fmt"
	"strings"
)

// Rule is one line of policy, and where it came from.
type Rule struct {
	// Kind is "p" (a permission) or "g" (a subject bound to a role).
	Kind string
	// Fields are the line's fields after the kind: subject, resource,
	// action, object, effect for p; subject, role for g.
	Fields []string
	// Source is where the line was read: an argocd-rbac-cm key
	// ("policy.csv"), "builtin-policy.csv", or a project role
	// ("AppProject team-a spec.roles[0]").
	Source string
	// Line is the 1-based line in Source (the policies item for a project
	// role; 0 for the lines a project role implies).
	Line int
}

// String is the rule as a policy line: "p, role:admin, applications, sync, */*, allow".
func (r Rule) String() string {
	return r.Kind + ", " + strings.Join(r.Fields, ", ")
}

// Where names the line's place: "policy.csv line 3", "builtin-policy.csv
// line 20", "AppProject team-a spec.roles[0].policies line 2", or the
// source alone for a line a project role implies.
func (r Rule) Where() string {
	if r.Line > 0 {
		return fmt.Sprintf("%s line %d", r.Source, r.Line)
	}
	return r.Source
}

// key identifies a rule by its fields, as casbin reports a matched rule.
func (r Rule) key() string { return r.Kind + "\x00" + strings.Join(r.Fields, "\x00") }

// parsePolicy reads policy text (CSV lines; blank lines and lines starting
// with '#' are skipped) into rules of the right shape. Every malformed
// line is an *Error naming source and line.
func parsePolicy(source, text string) ([]Rule, []error) {
	var rules []Rule
	var errs []error
	for i, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r, err := parseLine(line)
		if err != nil {
			errs = append(errs, &Error{Source: source, Line: i + 1, Text: line, Err: err})
			continue
		}
		r.Source, r.Line = source, i+1
		rules = append(rules, r)
	}
	return rules, errs
}

// parseLine reads one CSV line (quotes as in CSV) into a rule and checks
// its shape: p with five non-empty fields and an allow or deny effect, g
// with two.
func parseLine(line string) (Rule, error) {
	rd := csv.NewReader(strings.NewReader(line))
	rd.TrimLeadingSpace = true
	tokens, err := rd.Read()
	if err != nil {
		return Rule{}, fmt.Errorf("%w: %v", ErrMalformedLine, err)
	}
	for i := range tokens {
		tokens[i] = strings.TrimSpace(tokens[i])
	}
	r := Rule{Kind: tokens[0], Fields: tokens[1:]}
	return r, checkShape(r)
}

// checkShape checks a rule's shape: p with five non-empty fields and an
// allow or deny effect, g with two.
func checkShape(r Rule) error {
	switch r.Kind {
	case "p":
		if len(r.Fields) != 5 {
			return fmt.Errorf("%w: a p line has 5 fields (subject, resource, action, object, allow|deny), got %d", ErrMalformedLine, len(r.Fields))
		}
		if eft := r.Fields[4]; eft != "allow" && eft != "deny" {
			return fmt.Errorf("%w: effect must be allow or deny, got %q", ErrMalformedLine, eft)
		}
	case "g":
		if len(r.Fields) != 2 {
			return fmt.Errorf("%w: a g line has 2 fields (subject, role), got %d", ErrMalformedLine, len(r.Fields))
		}
	default:
		return fmt.Errorf("%w: a line starts with p or g, got %q", ErrMalformedLine, r.Kind)
	}
	for i, f := range r.Fields {
		if f == "" {
			return fmt.Errorf("%w: field %d is empty", ErrMalformedLine, i+2)
		}
	}
	return nil
}

// compileRules compiles the patterns of the p rules into m and checks that
// each resource pattern matches a resource Argo CD has.
func compileRules(m *matcher, rules []Rule) []error {
	var errs []error
	for _, r := range rules {
		if r.Kind != "p" {
			continue
		}
		if err := compileRule(m, r); err != nil {
			errs = append(errs, &Error{Source: r.Source, Line: r.Line, Text: r.String(), Err: err})
		}
	}
	return errs
}

func compileRule(m *matcher, r Rule) error {
	for _, pattern := range r.Fields[1:4] {
		if err := m.compile(pattern); err != nil {
			return err
		}
	}
	for _, res := range knownResources() {
		if m.match(res, r.Fields[1]) {
			return nil
		}
	}
	return fmt.Errorf("%w: resource %q matches none of %s", ErrMalformedLine, r.Fields[1], strings.Join(knownResources(), ", "))
}
