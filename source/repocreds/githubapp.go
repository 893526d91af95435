package repocreds

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/kubegitops/gitops/source"
)

// GitHubApp mints and refreshes the installation access tokens of a
// GitHub App (Argo CD's githubAppID, githubAppInstallationID,
// githubAppPrivateKey and githubAppEnterpriseBaseUrl): a JWT signed with
// the app's key (RS256, valid 9 minutes) is exchanged at
// POST {base}/app/installations/{id}/access_tokens for a token, which is
// reused until 5 minutes before it expires. Concurrent callers share one
// request. It is safe for concurrent use and never prints its key or
// tokens.
type GitHubApp struct {
	appID, installationID int64
	baseURL               string
	key                   *rsa.PrivateKey
	client                *http.Client
	now                   func() time.Time

	flight  singleflight.Group
	mu      sync.Mutex
	token   string
	expires time.Time
}

// gitHubAPI is GitHub's API; Enterprise Server's is the enterprise base
// URL itself (Argo CD documents it with its /api/v3 suffix).
const gitHubAPI = "https://api.github.com"

// newGitHubApp parses a Secret's GitHub App fields; the error is a
// *FieldError naming the Secret and the field, never the key.
func newGitHubApp(id string, appID, inst int64, keyPEM, base string, timeout time.Duration) (*GitHubApp, error) {
	bad := func(field, reason string) error {
		return &FieldError{Secret: id, Field: field, Reason: reason, Err: source.ErrInvalidRepository}
	}
	if inst == 0 {
		return nil, bad("githubAppInstallationID", "required here (the installation is not looked up from the repository's organization)")
	}
	block, _ := pem.Decode([]byte(keyPEM))
	if block == nil {
		return nil, bad("githubAppPrivateKey", "not a PEM key")
	}
	var key *rsa.PrivateKey
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		key = k
	} else if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		key, _ = k.(*rsa.PrivateKey)
	}
	if key == nil {
		return nil, bad("githubAppPrivateKey", "not an RSA private key")
	}
	base = strings.TrimSuffix(base, "/")
	if base == "" {
		base = gitHubAPI
	}
	return &GitHubApp{appID: appID, installationID: inst, baseURL: base, key: key,
		client: &http.Client{Timeout: timeout}, now: time.Now}, nil
}

// apply implements minter: user x-access-token, the installation token
// as the password.
func (g *GitHubApp) apply(ctx context.Context, _ string, c *source.Credentials) error {
	tok, err := g.Token(ctx)
	if err != nil {
		return err
	}
	c.Username, c.Password, c.BearerToken = "x-access-token", tok, ""
	return nil
}

// cacheIdentity implements minter.
func (g *GitHubApp) cacheIdentity() string {
	return fmt.Sprintf("github-app:%s:%d:%d", g.baseURL, g.appID, g.installationID)
}

// Token returns a valid installation token, minting one when none is held
// or the one held expires within 5 minutes.
func (g *GitHubApp) Token(ctx context.Context) (string, error) {
	g.mu.Lock()
	if g.token != "" && g.now().Add(5*time.Minute).Before(g.expires) {
		t := g.token
		g.mu.Unlock()
		return t, nil
	}
	g.mu.Unlock()
	v, err, _ := g.flight.Do("token", func() (any, error) { return g.mint(ctx) })
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

func (g *GitHubApp) mint(ctx context.Context) (string, error) {
	jwt, err := g.jwt()
	if err != nil {
		return "", err
	}
	url := fmt.Sprintf("%s/app/installations/%d/access_tokens", g.baseURL, g.installationID)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return "", fmt.Errorf("github app %d: %w", g.appID, source.ErrInvalidRepository)
	}
	req.Header.Set("Authorization", "Bearer "+jwt)
	req.Header.Set("Accept", "application/vnd.github+json")
	resp, err := g.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("github app %d: token endpoint: %w", g.appID, source.ErrUnavailable)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return "", fmt.Errorf("github app %d: token endpoint: %w", g.appID, source.ErrUnavailable)
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("github app %d installation %d: token endpoint answered %d: %w", g.appID, g.installationID, resp.StatusCode, source.ErrAuthentication)
	}
	var out struct {
		Token     string    `json:"token"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.Token == "" {
		return "", fmt.Errorf("github app %d: token endpoint answered no token: %w", g.appID, source.ErrAuthentication)
	}
	g.mu.Lock()
	g.token, g.expires = out.Token, out.ExpiresAt
	g.mu.Unlock()
	return out.Token, nil
}

// jwt returns the app's JSON Web Token: issued a minute in the past (clock
// drift), valid 9 minutes (GitHub allows 10).
func (g *GitHubApp) jwt() (string, error) {
	now := g.now()
	enc := base64.RawURLEncoding
	header := enc.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`))
	claims, _ := json.Marshal(map[string]any{"iat": now.Add(-time.Minute).Unix(), "exp": now.Add(9 * time.Minute).Unix(), "iss": strconv.FormatInt(g.appID, 10)})
	signing := header + "." + enc.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, g.key, crypto.SHA256, sum[:])
	if err != nil {
		return "", errors.New("github app: signing the JWT failed")
	}
	return signing + "." + enc.EncodeToString(sig), nil
}

// String names the app without its key or token.
func (g *GitHubApp) String() string {
	return fmt.Sprintf("GitHubApp(app %d, installation %d, %s)", g.appID, g.installationID, g.baseURL)
}

// Format implements fmt.Formatter: every verb prints String.
func (g *GitHubApp) Format(f fmt.State, _ rune) { fmt.Fprint(f, g.String()) }

// MarshalJSON encodes String only.
func (g *GitHubApp) MarshalJSON() ([]byte, error) { return json.Marshal(g.String()) }
