package repocreds

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"

	"github.com/kubegitops/gitops/source"
)

// refreshBefore is how long before it expires a minted token is replaced.
const refreshBefore = 5 * time.Minute

// minter obtains short-lived credentials when a repository is looked up:
// a GitHub App's installation token, a Microsoft Entra ID token (Azure
// workload identity or service principal), an Azure Container Registry
// refresh token, a Google Cloud access token. Each keeps its token until
// refreshBefore its expiry and shares one request among concurrent
// callers.
type minter interface {
	// apply sets on c the credentials to use now.
	apply(ctx context.Context, repoURL string, c *source.Credentials) error
	// cacheIdentity names the identity for the caches keyed by
	// credentials (source.Credentials.CacheIdentity), so that each new
	// token of one identity does not start caches of its own. It holds no
	// secret.
	cacheIdentity() string
}

// TokenCache keeps the token minters of repository Secrets across the
// Stores of a host that reloads its Secrets (Options.Tokens), so that a
// reload of every Secret, which the change of any one causes, does not
// mint every token again. A minter is found by a digest of everything its
// Secret configures (secrets included, hashed): a rotated key gets a new
// one. Safe for concurrent use.
type TokenCache struct {
	mu sync.Mutex
	m  map[string]minter
}

// maxCachedMinters bounds a TokenCache; past it, it starts again empty
// (rotations leave old minters behind).
const maxCachedMinters = 4096

// NewTokenCache returns an empty TokenCache.
func NewTokenCache() *TokenCache { return &TokenCache{m: map[string]minter{}} }

// get returns the minter of key, made by mk on first use.
func (c *TokenCache) get(key string, mk func() (minter, error)) (minter, error) {
	if c == nil {
		return mk()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if m, ok := c.m[key]; ok {
		return m, nil
	}
	m, err := mk()
	if err != nil {
		return nil, err
	}
	if len(c.m) >= maxCachedMinters {
		c.m = map[string]minter{}
	}
	c.m[key] = m
	return m, nil
}

// digest returns a key for parts (hashed: they may hold secrets).
func digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// expiringToken is a token and when it expires.
type expiringToken struct {
	value   string
	expires time.Time
}

// fresh reports whether t may still be used at now.
func (t expiringToken) fresh(now time.Time) bool {
	return t.value != "" && now.Add(refreshBefore).Before(t.expires)
}
