package rbac

// Decision is the answer to one request, with what decided it, for an
// audit log and for the refusal's error (Err).
type Decision struct {
	// Allowed says whether the request may proceed.
	Allowed bool
	// Via is the subject whose check decided: for an allowed request the
	// one that granted it (the default role, the subject's name or one of
	// its groups); for a refused one the first subject a deny line
	// refused, empty when no line matched any.
	Via string
	// Rule is the line that decided for Via: the allow that granted the
	// request or the deny that refused it; zero when no line matched.
	Rule Rule
	// Resource, Action and Object are the request.
	Resource, Action, Object string
	// Checked are the subjects checked, in order, each with the line that
	// decided for it. A refusal lists every one (see Err).
	Checked []Check
	// Ignored are the subject's groups that were not checked because no
	// g line binds them to a role (Argo CD ignores them).
	Ignored []string
}

// Check is the answer for one subject of a request, checked on its own.
type Check struct {
	// Subject is the name checked: the default role, the user, one of its
	// groups, or a project role (proj:<project>:<role>).
	Subject string
	// Default marks the policy.default role's check.
	Default bool
	// Allowed says whether the lines matching Subject allow the request.
	Allowed bool
	// Rule is the deny that refused Subject, or the allow that granted
	// it; zero when no line matched.
	Rule Rule
	// Reason, when set, says why Subject was refused without its lines
	// being checked (a project role asking about another project).
	Reason string
}

// Matched reports whether a policy line decided the check.
func (c Check) Matched() bool { return c.Rule.Kind != "" }

// Err is nil for an allowed request and a *DeniedError naming every
// subject checked and what refused each otherwise.
func (d Decision) Err() error {
	if d.Allowed {
		return nil
	}
	return &DeniedError{Resource: d.Resource, Action: d.Action, Object: d.Object,
		Checked: append([]Check(nil), d.Checked...), Ignored: append([]string(nil), d.Ignored...)}
}

// Enforce reports whether subject may do action on the object of resource
// (see Decide).
func (e *Enforcer) Enforce(s Subject, resource, action, object string) bool {
	return e.Decide(s, resource, action, object).Allowed
}

// Decide answers a request as Argo CD's API server does, and says which
// subject and line decided:
//
//  1. The policy is the built-in policy, argocd-rbac-cm's, and, when the
//     request is about a known project (the first segment of an
//     applications, applicationsets, logs, exec, repositories or clusters
//     object, or the object of projects), that project's roles.
//  2. The default role (policy.default) is checked first; what it allows
//     is allowed, whatever denies.
//  3. A project role subject "proj:<p>:<r>" asking about project p is
//     checked alone; about another known project it is refused.
//  4. Otherwise the subject's name, then each of its groups bound to a
//     role by a g line, is checked on its own: a subject is allowed when
//     a line matching it allows and none matching it denies. The request
//     is allowed when any subject is (Argo CD, argo-cd#17547): a deny
//     reached through one group does not take away what another grants.
//     With EnforcerOptions.DenyAcrossSubjects, a deny matching any of
//     them refuses the request instead.
func (e *Enforcer) Decide(s Subject, resource, action, object string) Decision {
	d := Decision{Resource: resource, Action: action, Object: object}
	set := e.global
	project, scoped := projectOf(resource, object)
	projSet, known := e.projects[project]
	if scoped && known {
		set = projSet
	}
	if e.defaultRole != "" {
		c := set.check(e.defaultRole, resource, action, object)
		c.Default = true
		if d.record(c) {
			return d
		}
	}
	if p, _, ok := projectSubject(s.Name); ok && scoped && known {
		if p != project {
			d.record(Check{Subject: s.Name, Reason: "a role of project " + p + " asking about project " + project})
			return d
		}
		d.record(set.check(s.Name, resource, action, object))
		return d
	}
	subjects, ignored := candidates(s, set.bound)
	d.Ignored = ignored
	var checks []Check
	for _, sub := range subjects {
		c := set.check(sub, resource, action, object)
		if !e.opts.DenyAcrossSubjects && d.record(c) {
			return d
		}
		checks = append(checks, c)
	}
	if e.opts.DenyAcrossSubjects {
		return d.strict(checks)
	}
	return d
}

// record adds c to the decision and reports whether it allows the
// request; the first allow, or else the first deny, becomes Via and Rule.
func (d *Decision) record(c Check) bool {
	d.Checked = append(d.Checked, c)
	switch {
	case c.Allowed:
		d.Allowed, d.Via, d.Rule = true, c.Subject, c.Rule
	case c.Matched() && d.Via == "":
		d.Via, d.Rule = c.Subject, c.Rule
	}
	return c.Allowed
}

// strict decides checks under DenyAcrossSubjects: a deny matching any
// subject refuses; else an allow of any grants.
func (d Decision) strict(checks []Check) Decision {
	for _, c := range checks {
		if !c.Allowed && c.Matched() {
			d.Checked = append(d.Checked, checks...)
			d.Via, d.Rule = c.Subject, c.Rule
			return d
		}
	}
	for _, c := range checks {
		if d.record(c) {
			return d
		}
	}
	return d
}

// candidates are the subjects checked for s: its name, then its groups
// that a g line binds to a role, each once; ignored are the groups no g
// line binds (Argo CD does not check them).
func candidates(s Subject, bound map[string]bool) (subjects, ignored []string) {
	seen := map[string]bool{}
	if s.Name != "" {
		subjects, seen[s.Name] = append(subjects, s.Name), true
	}
	for _, g := range s.Groups {
		switch {
		case seen[g]:
		case bound[g]:
			subjects = append(subjects, g)
		default:
			ignored = append(ignored, g)
		}
		seen[g] = true
	}
	return subjects, ignored
}
