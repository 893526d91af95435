package rbac

import (
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/casbin/casbin/v2"
	"github.com/casbin/casbin/v2/model"
	"github.com/casbin/casbin/v2/persist"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

//go:embed builtin-policy.csv
var builtinPolicy string

// modelConf is Argo CD's casbin model (assets/model.conf): a request is
// subject, resource, action, object; a rule matches when the subject is or
// inherits the rule's subject (g) and resource, action and object match
// its patterns; the request is allowed when some matching rule allows and
// none denies.
const modelConf = `
[request_definition]
r = sub, res, act, obj

[policy_definition]
p = sub, res, act, obj, eft

[role_definition]
g = _, _

[policy_effect]
e = some(where (p.eft == allow)) && !some(where (p.eft == deny))

[matchers]
m = g(r.sub, p.sub) && globOrRegexMatch(r.res, p.res) && globOrRegexMatch(r.act, p.act) && globOrRegexMatch(r.obj, p.obj)
`

// BuiltinPolicy returns Argo CD's built-in policy lines (role:readonly,
// role:admin, g admin role:admin), which every Enforcer loads first.
func BuiltinPolicy() string { return builtinPolicy }

// Subject is who asks: a user name (a local user, or the SSO subject) and
// the groups its token carries (see GroupsFromClaims).
type Subject struct {
	// Name is the user, or a project role "proj:<project>:<role>".
	Name string
	// Groups are the user's SSO groups.
	Groups []string
}

// Enforcer decides requests against the built-in policy, argocd-rbac-cm's
// policy and the projects' roles. It holds no mutable state after
// NewEnforcer: build a new one when the config map or the projects change.
// Safe for concurrent use.
type Enforcer struct {
	opts        EnforcerOptions
	defaultRole string
	global      *policySet
	projects    map[string]*policySet // every project given; its own set when it has roles
}

// policySet is one casbin enforcer over a set of rules.
type policySet struct {
	casbin *casbin.SyncedEnforcer
	bound  map[string]bool // subjects of g lines: the groups worth checking
	rules  map[string]Rule // p rules by key, the first of equal ones
}

// NewEnforcer builds an Enforcer from argocd-rbac-cm (see Load; nil means
// an empty config map) and the AppProjects whose roles apply, deciding as
// Argo CD does (DefaultEnforcerOptions). A bad project role line is an
// *Error naming it (see ProjectPolicies).
func NewEnforcer(cfg *Config, projects []v1alpha1.AppProject) (*Enforcer, error) {
	return NewEnforcerWithOptions(cfg, projects, DefaultEnforcerOptions())
}

// NewEnforcerWithOptions is NewEnforcer with options (EnforcerOptions).
func NewEnforcerWithOptions(cfg *Config, projects []v1alpha1.AppProject, opts EnforcerOptions) (*Enforcer, error) {
	if cfg == nil {
		c, err := Load(nil)
		if err != nil {
			return nil, err
		}
		cfg = c
	}
	if cfg.MatchMode != "" && cfg.MatchMode != MatchGlob && cfg.MatchMode != MatchRegex {
		return nil, &Error{Source: KeyMatchMode, Err: fmt.Errorf("%w: want glob or regex, got %q", ErrInvalidValue, cfg.MatchMode)}
	}
	for _, r := range cfg.Policy {
		if err := checkShape(r); err != nil {
			return nil, &Error{Source: r.Source, Line: r.Line, Text: r.String(), Err: err}
		}
	}
	builtin, errs := parsePolicy("builtin-policy.csv", builtinPolicy)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if cfg.MatchMode == MatchRegex {
		builtin = builtinAsRegex(builtin)
	}
	perProject, err := ProjectPolicies(projects)
	if err != nil {
		return nil, err
	}
	m := newMatcher(cfg.MatchMode)
	all := append(append([]Rule(nil), builtin...), cfg.Policy...)
	errs = compileRules(m, all)
	for _, rules := range perProject {
		errs = append(errs, compileRules(m, rules)...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	e := &Enforcer{opts: opts, defaultRole: cfg.DefaultRole, projects: map[string]*policySet{}}
	if e.global, err = newPolicySet(m, all); err != nil {
		return nil, err
	}
	for _, p := range projects {
		set := e.global
		if rules, ok := perProject[p.Name]; ok {
			if set, err = newPolicySet(m, append(append([]Rule(nil), all...), rules...)); err != nil {
				return nil, fmt.Errorf("rbac: AppProject %s: %w", p.Name, err)
			}
		}
		e.projects[p.Name] = set
	}
	return e, nil
}

// check asks casbin about one subject alone, as Argo CD enforces each
// subject: allowed when a line matching it allows and none denies. The
// Check's Rule is the deny that refused it, else the allow that granted
// it; zero when no line matched (or casbin failed, which refuses).
func (p *policySet) check(sub, resource, action, object string) Check {
	c := Check{Subject: sub}
	ok, explain, err := p.casbin.EnforceEx(sub, resource, action, object)
	if err != nil || len(explain) == 0 {
		return c
	}
	c.Allowed, c.Rule = ok, p.rules[Rule{Kind: "p", Fields: explain}.key()]
	return c
}

// newPolicySet loads rules into a casbin enforcer with Argo CD's model and
// the matcher's globOrRegexMatch.
func newPolicySet(m *matcher, rules []Rule) (*policySet, error) {
	mdl, err := model.NewModelFromString(modelConf)
	if err != nil {
		return nil, fmt.Errorf("rbac: model: %w", err)
	}
	ce, err := casbin.NewSyncedEnforcer(mdl, ruleAdapter(rules))
	if err != nil {
		return nil, fmt.Errorf("rbac: loading policy: %w", err)
	}
	ce.AddFunction("globOrRegexMatch", m.casbinFunc)
	set := &policySet{casbin: ce, bound: map[string]bool{}, rules: map[string]Rule{}}
	for _, r := range rules {
		switch r.Kind {
		case "g":
			set.bound[r.Fields[0]] = true
		case "p":
			if _, dup := set.rules[r.key()]; !dup {
				set.rules[r.key()] = r
			}
		}
	}
	return set, nil
}

// builtinAsRegex rewrites the built-in lines' glob patterns ("*/*",
// "update/*") as the anchored regular expressions that match the same
// strings ("^.*/.*$"), so that role:readonly and role:admin keep their
// meaning under policy.matchMode regex.
func builtinAsRegex(rules []Rule) []Rule {
	out := make([]Rule, len(rules))
	for i, r := range rules {
		fields := append([]string(nil), r.Fields...)
		if r.Kind == "p" {
			for j := 1; j <= 3; j++ {
				parts := strings.Split(fields[j], "*")
				for k := range parts {
					parts[k] = regexp.QuoteMeta(parts[k])
				}
				fields[j] = "^" + strings.Join(parts, ".*") + "$"
			}
		}
		r.Fields = fields
		out[i] = r
	}
	return out
}

// ruleAdapter is a read-only casbin adapter over parsed rules.
type ruleAdapter []Rule

// LoadPolicy adds the rules to the model (equal rules once).
func (a ruleAdapter) LoadPolicy(m model.Model) error {
	for _, r := range a {
		if err := persist.LoadPolicyArray(append([]string{r.Kind}, r.Fields...), m); err != nil {
			return fmt.Errorf("%s line %d: %w", r.Source, r.Line, err)
		}
	}
	return nil
}

// SavePolicy refuses: the policy is read from its sources only.
func (ruleAdapter) SavePolicy(model.Model) error { return errReadOnly }

// AddPolicy refuses: the policy is read from its sources only.
func (ruleAdapter) AddPolicy(string, string, []string) error { return errReadOnly }

// RemovePolicy refuses: the policy is read from its sources only.
func (ruleAdapter) RemovePolicy(string, string, []string) error { return errReadOnly }

// RemoveFilteredPolicy refuses: the policy is read from its sources only.
func (ruleAdapter) RemoveFilteredPolicy(string, string, int, ...string) error { return errReadOnly }

var errReadOnly = errors.New("rbac: the policy is read-only")
