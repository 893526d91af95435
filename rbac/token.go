package rbac

import (
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// ProjectTokenIssuer is the issuer (iss) of the tokens Argo CD's API
// server signs, project tokens among them.
const ProjectTokenIssuer = "argocd"

// The kinds of a project token that is not honoured; a *TokenError wraps
// one of them.
var (
	// ErrNotProjectToken: the token is not one of Argo CD's project tokens
	// (another issuer, or a subject that is not proj:<project>:<role>);
	// a host may try its other ways of authenticating it.
	ErrNotProjectToken = errors.New("not an Argo CD project token")
	// ErrInvalidToken: the token is malformed, not signed with the key, of
	// a signing method other than HMAC, expired, not yet valid, or
	// without an issued-at time.
	ErrInvalidToken = errors.New("invalid project token")
	// ErrTokenRevoked: the token's project or role does not exist, or its
	// entry is not listed in the role's jwtTokens (removed: revoked).
	ErrTokenRevoked = errors.New("project token not listed in its role's jwtTokens")
)

// TokenError is a project token that is not honoured. It names the
// token's subject and id (both are listed in the AppProject, neither is a
// secret) when they could be read, never the token.
type TokenError struct {
	// Subject is the token's subject (proj:<project>:<role>), empty when
	// the token could not be read.
	Subject string
	// ID is the token's id (jti), empty when it has none or could not be
	// read.
	ID string
	// Err is one of the Err* kinds, wrapped with the detail.
	Err error
}

// Error says which token and why.
func (e *TokenError) Error() string {
	switch {
	case e.Subject != "" && e.ID != "":
		return fmt.Sprintf("rbac: token %s (id %s): %v", e.Subject, e.ID, e.Err)
	case e.Subject != "":
		return fmt.Sprintf("rbac: token %s: %v", e.Subject, e.Err)
	default:
		return fmt.Sprintf("rbac: token: %v", e.Err)
	}
}

// Unwrap returns the kind of error.
func (e *TokenError) Unwrap() error { return e.Err }

// ProjectToken is a verified project token: a JWT Argo CD's API server
// issued for a project role ("argocd proj role create-token").
type ProjectToken struct {
	// Project and Role name the role: the subject proj:<Project>:<Role>.
	Project, Role string
	// ID is the token's id (jti); empty for a token issued before Argo CD
	// gave tokens ids.
	ID string
	// IssuedAt is the token's iat.
	IssuedAt time.Time
	// ExpiresAt is the token's exp; zero when it does not expire.
	ExpiresAt time.Time
}

// Subject is the token's subject for Decide: the project role.
func (t ProjectToken) Subject() Subject {
	return Subject{Name: "proj:" + t.Project + ":" + t.Role}
}

// ProjectLookup returns the AppProject of that name as the host has it
// now, and whether it exists.
type ProjectLookup func(name string) (*v1alpha1.AppProject, bool)

// VerifyProjectToken checks a bearer token as Argo CD's API server checks
// a project token, at time now:
//
//   - its issuer is "argocd" and its subject proj:<project>:<role>, else
//     ErrNotProjectToken (nothing else is checked);
//   - it is a JWT signed with HMAC (HS256, HS384 or HS512) by secretKey
//     (argocd-secret's server.secretkey), not expired (exp) and valid now
//     (nbf), with an issued-at time (iat), else ErrInvalidToken;
//   - the project exists (lookup), has the role, and the role's jwtTokens
//     list the token, else ErrTokenRevoked. A token with an id is listed
//     by the entry of that id, or by an entry without an id of the same
//     iat; a token without an id by an entry of the same iat. (Argo CD
//     also accepts a token whose entry is gone when another entry has the
//     same iat; here removing the entry always revokes it.)
//
// The lookup happens at each call, so a token whose entry is removed is
// refused from the next call on. Errors are *TokenError and never hold the
// token.
func VerifyProjectToken(token string, secretKey []byte, lookup ProjectLookup, now time.Time) (ProjectToken, error) {
	var unverified jwt.RegisteredClaims
	if _, _, err := jwt.NewParser().ParseUnverified(token, &unverified); err != nil {
		return ProjectToken{}, &TokenError{Err: fmt.Errorf("%w: not a JWT", ErrNotProjectToken)}
	}
	project, role, ok := projectSubject(unverified.Subject)
	if unverified.Issuer != ProjectTokenIssuer || !ok {
		return ProjectToken{}, &TokenError{Err: fmt.Errorf("%w: issuer %q, subject not proj:<project>:<role>", ErrNotProjectToken, unverified.Issuer)}
	}
	subject := unverified.Subject
	if len(secretKey) == 0 {
		return ProjectToken{}, &TokenError{Subject: subject, Err: fmt.Errorf("%w: no server.secretkey to verify it with", ErrInvalidToken)}
	}
	var claims jwt.RegisteredClaims
	parser := jwt.NewParser(jwt.WithValidMethods([]string{"HS256", "HS384", "HS512"}), jwt.WithTimeFunc(func() time.Time { return now }))
	if _, err := parser.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return secretKey, nil }); err != nil {
		return ProjectToken{}, &TokenError{Subject: subject, ID: unverified.ID, Err: fmt.Errorf("%w: %v", ErrInvalidToken, err)}
	}
	if claims.IssuedAt == nil {
		return ProjectToken{}, &TokenError{Subject: subject, ID: claims.ID, Err: fmt.Errorf("%w: no issued-at time (iat)", ErrInvalidToken)}
	}
	t := ProjectToken{Project: project, Role: role, ID: claims.ID, IssuedAt: claims.IssuedAt.Time}
	if claims.ExpiresAt != nil {
		t.ExpiresAt = claims.ExpiresAt.Time
	}
	if err := tokenListed(lookup, t); err != nil {
		return ProjectToken{}, &TokenError{Subject: subject, ID: t.ID, Err: err}
	}
	return t, nil
}

// tokenListed finds t's entry in its role's jwtTokens (see
// VerifyProjectToken).
func tokenListed(lookup ProjectLookup, t ProjectToken) error {
	var proj *v1alpha1.AppProject
	ok := false
	if lookup != nil {
		proj, ok = lookup(t.Project)
	}
	if !ok || proj == nil {
		return fmt.Errorf("%w: project %s does not exist", ErrTokenRevoked, t.Project)
	}
	iat := t.IssuedAt.Unix()
	for _, r := range proj.Spec.Roles {
		if r.Name != t.Role {
			continue
		}
		for _, entry := range r.JWTTokens {
			if t.ID != "" && entry.ID == t.ID || entry.IssuedAt == iat && (t.ID == "" || entry.ID == "") {
				return nil
			}
		}
		return fmt.Errorf("%w: AppProject %s role %s lists no entry for it", ErrTokenRevoked, t.Project, t.Role)
	}
	return fmt.Errorf("%w: AppProject %s has no role %s", ErrTokenRevoked, t.Project, t.Role)
}
