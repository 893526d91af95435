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

// newGitHubApp parses the Secret's GitHub App fields.
func newGitHubApp(id string, fields map[string]string) (*GitHubApp, error) {
	appID, err1 := strconv.ParseInt(fields["githubAppID"], 10, 64)
	inst, err2 := strconv.ParseInt(fields["githubAppInstallationID"], 10, 64)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("repository secret %s: githubAppID and githubAppInstallationID must be numbers", id)
	}
	block, _ := pem.Decode([]byte(fields["githubAppPrivateKey"]))
	if block == nil {
		return nil, fmt.Errorf("repository secret %s: githubAppPrivateKey is not a PEM key", id)
	}
	var key *rsa.PrivateKey
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		key = k
	} else if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		key, _ = k.(*rsa.PrivateKey)
	}
	if key == nil {
		return nil, fmt.Errorf("repository secret %s: githubAppPrivateKey is not an RSA private key", id)
	}
	base := strings.TrimSuffix(fields["githubAppEnterpriseBaseUrl"], "/")
	if base == "" {
		base = gitHubAPI
	}
	return &GitHubApp{appID: appID, installationID: inst, baseURL: base, key: key,
		client: &http.Client{Timeout: 30 * time.Second}, now: time.Now}, nil
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
