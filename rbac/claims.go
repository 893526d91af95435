package rbac

// GroupsFromClaims returns a user's groups from its token's claims, as
// Argo CD reads them: for each scope (claim name) in order, a string value
// is one group and a list contributes its string items; other values and
// missing claims contribute nothing. nil scopes means DefaultScopes().
func GroupsFromClaims(claims map[string]any, scopes []string) []string {
	if scopes == nil {
		scopes = DefaultScopes()
	}
	var groups []string
	for _, scope := range scopes {
		switch v := claims[scope].(type) {
		case string:
			groups = append(groups, v)
		case []string:
			groups = append(groups, v...)
		case []any:
			for _, item := range v {
				if s, ok := item.(string); ok {
					groups = append(groups, s)
				}
			}
		}
	}
	return groups
}
