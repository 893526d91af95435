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
	// JWTTokens list the project tokens issued for this role (Argo CD's
	// "argocd proj role create-token"): a JWT whose subject is
	// proj:<project>:<name>, signed by the API server. A token is honoured
	// only while its entry is listed here; removing the entry revokes it.
	// Nothing in the engine issues or reads tokens; a host that plays Argo
	// CD's API server checks them (package rbac, VerifyProjectToken); the
	// operator names them once in an Event.
	JWTTokens []JWTToken `json:"jwtTokens,omitempty"`
}

// JWTToken is the record of one project token, as Argo CD keeps it in
// spec.roles[].jwtTokens: never the token itself, only its identity.
type JWTToken struct {
	// IssuedAt is the token's iat claim, in seconds since the epoch. A
	// token without an id (one issued before Argo CD gave tokens ids) is
	// recognised by it.
	IssuedAt int64 `json:"iat"`
	// ExpiresAt is the token's exp claim, in seconds since the epoch;
	// zero when the token does not expire. For people: the token's own
	// claim is what is checked.
	ExpiresAt int64 `json:"exp,omitempty"`
	// ID is the token's jti claim (a UUID unless the issuer was given
	// one).
	ID string `json:"id,omitempty"`
}
