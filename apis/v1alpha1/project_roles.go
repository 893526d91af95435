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
	// JWTTokens are the project tokens issued for this role (Argo CD's
	// API server issues them and checks a token against this list; removing
	// an entry revokes its token). The engine and the operator neither
	// issue nor check them: they are an API server's business (the
	// operator names them once in an Event).
	JWTTokens []JWTToken `json:"jwtTokens,omitempty"`
}

// JWTToken is a project token issued for a role, as Argo CD records it.
type JWTToken struct {
	// IssuedAt is when the token was issued, in seconds since the epoch
	// (its iat claim).
	IssuedAt int64 `json:"iat"`
	// ExpiresAt is when it expires, in seconds since the epoch (its exp
	// claim); 0 when it never does.
	ExpiresAt int64 `json:"exp,omitempty"`
	// ID is the token's ID (its jti claim).
	ID string `json:"id,omitempty"`
}
