package main

import (
	"fmt"
	"os"
	"slices"

	"sigs.k8s.io/yaml"
)

// role is what a group may do in the projects a rule names.
type role string

const (
	roleReadOnly role = "readonly"
	roleAdmin    role = "admin"
)

// policy maps groups to roles, per project.
type policy struct {
	// Rules grant a role to a group, in some projects or in all.
	Rules []policyRule `json:"rules"`
}

// policyRule grants Role to the members of Group in Projects (every
// project when empty); Secrets also lets them read Secret values.
type policyRule struct {
	Group    string   `json:"group"`
	Role     role     `json:"role"`
	Projects []string `json:"projects,omitempty"`
	Secrets  bool     `json:"secrets,omitempty"`
}

// perms is what one identity may do in one project.
type perms struct {
	Read, Write, Secrets bool
}

// loadPolicy reads a policy file strictly.
func loadPolicy(file string) (policy, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return policy{}, fmt.Errorf("policy %s: %w", file, err)
	}
	return parsePolicy(file, data)
}

// loadPolicyText reads a policy from text (tests).
func loadPolicyText(text string) (policy, error) { return parsePolicy("(text)", []byte(text)) }

func parsePolicy(file string, data []byte) (policy, error) {
	var p policy
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return policy{}, fmt.Errorf("policy %s: %w", file, err)
	}
	return p, p.validate(file)
}

func (p policy) validate(file string) error {
	for i, r := range p.Rules {
		if r.Group == "" {
			return fmt.Errorf("policy %s: rules[%d]: group is required", file, i)
		}
		if r.Role != roleReadOnly && r.Role != roleAdmin {
			return fmt.Errorf("policy %s: rules[%d] (group %s): role %q is neither readonly nor admin", file, i, r.Group, r.Role)
		}
	}
	return nil
}

// permsFor returns the union of what groups may do in project.
func (p policy) permsFor(groups []string, project string) perms {
	var out perms
	for _, r := range p.Rules {
		if !slices.Contains(groups, r.Group) {
			continue
		}
		if len(r.Projects) > 0 && !slices.Contains(r.Projects, project) {
			continue
		}
		out.Read = true
		if r.Role == roleAdmin {
			out.Write = true
		}
		if r.Secrets {
			out.Secrets = true
		}
	}
	return out
}

// roleOf summarises the strongest role of groups anywhere, for the page
// header.
func (p policy) roleOf(groups []string) string {
	best := "none"
	for _, r := range p.Rules {
		if slices.Contains(groups, r.Group) {
			if r.Role == roleAdmin {
				return string(roleAdmin)
			}
			best = string(roleReadOnly)
		}
	}
	return best
}
