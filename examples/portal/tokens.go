package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"strings"
)

// identity is who made a request.
type identity struct {
	User   string
	Groups []string
	// Via says how the identity was proven: "token" (the token file),
	// "oidc", or "project-token" (an Argo CD project token; User is then
	// the role, proj:<project>:<role>).
	Via string
	// TokenID is a project token's id (jti), for the audit log; it is
	// listed in the AppProject and is no secret.
	TokenID string
}

// tokenFile holds the identities of bearer tokens, keyed by the SHA-256 of
// each token so that the tokens themselves are not kept in memory past
// loading and a lookup compares digests, not secrets.
type tokenFile map[[sha256.Size]byte]identity

// loadTokenFile reads lines "TOKEN USER [GROUP,GROUP...]"; blank lines and
// lines starting with # are skipped. Errors name the line, never the token.
func loadTokenFile(file string) (tokenFile, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", file, err)
	}
	out := tokenFile{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 || len(f) > 3 {
			return nil, fmt.Errorf("token file %s: line %d: want TOKEN USER [GROUP,GROUP...]", file, n)
		}
		if len(f[0]) < 16 {
			return nil, fmt.Errorf("token file %s: line %d (user %s): token shorter than 16 characters", file, n, f[1])
		}
		id := identity{User: f[1], Via: "token"}
		if len(f) == 3 {
			for _, g := range strings.Split(f[2], ",") {
				if g != "" {
					id.Groups = append(id.Groups, g)
				}
			}
		}
		h := sha256.Sum256([]byte(f[0]))
		if _, dup := out[h]; dup {
			return nil, fmt.Errorf("token file %s: line %d (user %s): token already given to another line", file, n, f[1])
		}
		out[h] = id
	}
	return out, sc.Err()
}

// lookup returns the identity of a bearer token.
func (t tokenFile) lookup(token string) (identity, bool) {
	if token == "" {
		return identity{}, false
	}
	id, ok := t[sha256.Sum256([]byte(token))]
	return id, ok
}
