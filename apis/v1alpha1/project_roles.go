package v1alpha1

// ProjectRole is a role of an AppProject: Argo CD RBAC policy lines that
// grant the role access to the project's applications, and the SSO groups
// bound to it. Package rbac turns a project's roles into policy (the
// subject of every line is proj:<project>:<role>) and checks requests
// against it.
type ProjectRole struct {
	// Name names the role; its policy subject is proj:<project>:<name>.
	// Letters, digits, '-' and '_', starting and ending with a letter or
	// digit; unique within the project.
	Name string `json:"name"`
	// Description says what the role is for, for people; nothing reads it.
	Description string `json:"description,omitempty"`
	// Policies are Argo CD policy lines ("p, proj:<project>:<role>,
	// applications, sync, <project>/*, allow"): the subject must be this
	// role and the object must be in this project. Package rbac refuses a
	// line that breaks either rule, naming the project, role and line.
	Policies []string `json:"policies,omitempty"`
	// Groups are the SSO groups (OIDC claim values, see package rbac's
	// scopes) bound to this role.
	Groups []string `json:"groups,omitempty"`
}
