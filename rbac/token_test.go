package rbac

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// signToken signs claims as Argo CD's session manager does (HS256 with
// server.secretkey).
func signToken(t *testing.T, method jwt.SigningMethod, key any, claims jwt.Claims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// argoClaims are the claims Argo CD's CreateToken gives a project token.
func argoClaims(subject, id string, iat time.Time, ttl time.Duration) jwt.RegisteredClaims {
	c := jwt.RegisteredClaims{Issuer: "argocd", Subject: subject, ID: id,
		IssuedAt: jwt.NewNumericDate(iat), NotBefore: jwt.NewNumericDate(iat)}
	if ttl > 0 {
		c.ExpiresAt = jwt.NewNumericDate(iat.Add(ttl))
	}
	return c
}

// TestVerifyProjectToken: a token Argo CD's API server would issue is
// honoured while its entry is listed in the role's jwtTokens, and refused,
// by kind and never quoting the token, when it is removed, expired,
// signed with another key or method, or not a project token at all.
func TestVerifyProjectToken(t *testing.T) {
	key := []byte("server-secret-key") // shorter than 32 bytes: Argo CD accepts any length
	iat := time.Unix(1_700_000_000, 0)
	now := iat.Add(time.Hour)
	entries := []v1alpha1.JWTToken{{IssuedAt: iat.Unix(), ID: "tok-1"}, {IssuedAt: 1535390316}}
	proj := v1alpha1.AppProject{Spec: v1alpha1.AppProjectSpec{Roles: []v1alpha1.ProjectRole{{Name: "ci", JWTTokens: entries}}}}
	proj.Name = "team-a"
	lookup := func(name string) (*v1alpha1.AppProject, bool) {
		if name == proj.Name {
			return &proj, true
		}
		return nil, false
	}
	valid := signToken(t, jwt.SigningMethodHS256, key, argoClaims("proj:team-a:ci", "tok-1", iat, 24*time.Hour))
	got, err := VerifyProjectToken(valid, key, lookup, now)
	if err != nil {
		t.Fatalf("valid token: %v", err)
	}
	if got.Subject().Name != "proj:team-a:ci" || got.ID != "tok-1" || !got.IssuedAt.Equal(iat) || !got.ExpiresAt.Equal(iat.Add(24*time.Hour)) {
		t.Errorf("token %+v", got)
	}
	// A token of before ids, listed by its iat (Argo CD's docs' example).
	old := signToken(t, jwt.SigningMethodHS256, key, argoClaims("proj:team-a:ci", "", time.Unix(1535390316, 0), 0))
	if _, err := VerifyProjectToken(old, key, lookup, now); err != nil {
		t.Errorf("token listed by iat: %v", err)
	}
	noIAT := jwt.RegisteredClaims{Issuer: "argocd", Subject: "proj:team-a:ci", ID: "tok-1"}
	none := "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + strings.Split(valid, ".")[1] + "."
	for name, tc := range map[string]struct {
		token string
		key   []byte
		kind  error
	}{
		"another key":      {valid, []byte("another-key"), ErrInvalidToken},
		"no key":           {valid, nil, ErrInvalidToken},
		"expired":          {signToken(t, jwt.SigningMethodHS256, key, argoClaims("proj:team-a:ci", "tok-1", iat, time.Minute)), key, ErrInvalidToken},
		"alg none":         {none, key, ErrInvalidToken},
		"no iat":           {signToken(t, jwt.SigningMethodHS256, key, noIAT), key, ErrInvalidToken},
		"not listed":       {signToken(t, jwt.SigningMethodHS256, key, argoClaims("proj:team-a:ci", "tok-2", iat, 0)), key, ErrTokenRevoked},
		"same iat, new id": {signToken(t, jwt.SigningMethodHS256, key, argoClaims("proj:team-a:ci", "tok-3", time.Unix(iat.Unix(), 0), 0)), key, ErrTokenRevoked},
		"no such role":     {signToken(t, jwt.SigningMethodHS256, key, argoClaims("proj:team-a:admin", "tok-1", iat, 0)), key, ErrTokenRevoked},
		"no such project":  {signToken(t, jwt.SigningMethodHS256, key, argoClaims("proj:team-b:ci", "tok-1", iat, 0)), key, ErrTokenRevoked},
		"a local account":  {signToken(t, jwt.SigningMethodHS256, key, argoClaims("admin:apiKey", "tok-1", iat, 0)), key, ErrNotProjectToken},
		"another issuer": {signToken(t, jwt.SigningMethodHS256, key, jwt.RegisteredClaims{Issuer: "https://sso.example.com", Subject: "proj:team-a:ci",
			IssuedAt: jwt.NewNumericDate(iat)}), key, ErrNotProjectToken},
		"not a JWT": {"reader-a-token-012345678", key, ErrNotProjectToken},
	} {
		_, err := VerifyProjectToken(tc.token, tc.key, lookup, now)
		var te *TokenError
		if !errors.As(err, &te) || !errors.Is(err, tc.kind) {
			t.Errorf("%s: got %v, want a *TokenError (%v)", name, err, tc.kind)
			continue
		}
		if parts := strings.Split(tc.token, "."); strings.Contains(err.Error(), tc.token) || strings.Contains(err.Error(), parts[len(parts)-1]) && len(parts) == 3 && parts[2] != "" {
			t.Errorf("%s: the error quotes the token: %v", name, err)
		}
	}

	// Removing the entry revokes the token from the next check on.
	proj.Spec.Roles[0].JWTTokens = entries[1:]
	if _, err := VerifyProjectToken(valid, key, lookup, now); !errors.Is(err, ErrTokenRevoked) ||
		err.Error() != "rbac: token proj:team-a:ci (id tok-1): project token not listed in its role's jwtTokens: AppProject team-a role ci lists no entry for it" {
		t.Errorf("removed entry: %v", err)
	}
}
