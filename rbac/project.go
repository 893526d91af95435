package rbac

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// projectResources are the resources a project role's line may name
// (Argo CD's AppProject validation).
func projectResources() map[string]bool {
	return map[string]bool{
		ResourceApplications: true, ResourceApplicationSets: true, ResourceRepositories: true,
		ResourceClusters: true, ResourceExec: true, ResourceLogs: true,
	}
}

// ProjectPolicies turns the projects' roles into policy, as Argo CD does:
// for each role, "p, proj:<project>:<role>, projects, get, <project>, allow"
// (a role may see its project), the role's policy lines, and
// "g, <group>, proj:<project>:<role>" for each of its groups. The result
// is keyed by project name; a project without roles has no entry.
//
// A role's line must be "p, proj:<project>:<role>, <resource>, <action>,
// <project>/<object>, allow|deny" with resource one of applications,
// applicationsets, repositories, clusters, exec, logs and object
// "<project>/<app>" or "<project>/<namespace>/<app>" (globs allowed);
// anything else is an *Error (ErrProjectPolicy or ErrMalformedLine) naming
// the project, role and line.
func ProjectPolicies(projects []v1alpha1.AppProject) (map[string][]Rule, error) {
	out := map[string][]Rule{}
	var errs []error
	for _, p := range projects {
		for i, role := range p.Spec.Roles {
			source := fmt.Sprintf("AppProject %s spec.roles[%d]", p.Name, i)
			subject := "proj:" + p.Name + ":" + role.Name
			rules := []Rule{{Kind: "p", Fields: []string{subject, ResourceProjects, ActionGet, p.Name, "allow"}, Source: source}}
			for j, line := range role.Policies {
				r, err := projectRule(p.Name, subject, line)
				if err != nil {
					errs = append(errs, &Error{Source: source + ".policies", Line: j + 1, Text: line, Err: err})
					continue
				}
				r.Source, r.Line = source+".policies", j+1
				rules = append(rules, r)
			}
			for _, g := range role.Groups {
				rules = append(rules, Rule{Kind: "g", Fields: []string{g, subject}, Source: source + ".groups"})
			}
			out[p.Name] = append(out[p.Name], rules...)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// projectRule parses one line of a project role and checks Argo CD's
// rules for it.
func projectRule(project, subject, line string) (Rule, error) {
	r, err := parseLine(strings.TrimSpace(line))
	if err != nil {
		return Rule{}, err
	}
	if r.Kind != "p" {
		return Rule{}, fmt.Errorf("%w: a project role's line is a p line", ErrProjectPolicy)
	}
	if r.Fields[0] != subject {
		return Rule{}, fmt.Errorf("%w: the subject must be %q, not %q", ErrProjectPolicy, subject, r.Fields[0])
	}
	if !projectResources()[r.Fields[1]] {
		return Rule{}, fmt.Errorf("%w: the resource must be applications, applicationsets, repositories, clusters, exec or logs, not %q", ErrProjectPolicy, r.Fields[1])
	}
	object := regexp.MustCompile(`^` + regexp.QuoteMeta(project) + `/[*\w.-]+(/[*\w.-]+)?$`)
	if !object.MatchString(r.Fields[3]) {
		return Rule{}, fmt.Errorf("%w: the object must be %s/*, %s/<app> or %s/<namespace>/<app>, not %q", ErrProjectPolicy, project, project, project, r.Fields[3])
	}
	return r, nil
}
