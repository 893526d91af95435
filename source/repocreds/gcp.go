package repocreds

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/jwt"
	"golang.org/x/sync/singleflight"

	"github.com/kubegitops/gitops/source"
)

// Google's token endpoint and the scope Argo CD asks for.
const (
	googleTokenURL = "https://oauth2.googleapis.com/token"
	googleScope    = "https://www.googleapis.com/auth/cloud-platform"
)

// gcpMinter mints the credentials of a Google Cloud Source repository from
// a gcpServiceAccountKey (Argo CD: user name the key's client_email, the
// password an OAuth access token of scope cloud-platform). A key of type
// service_account signs a JWT for the token (at the key's token_uri); one
// of type authorized_user trades its refresh token.
type gcpMinter struct {
	email  string
	source func(ctx context.Context) oauth2.TokenSource
	http   *http.Client
	now    func() time.Time
	id     string

	flight singleflight.Group
	mu     sync.Mutex
	tok    expiringToken
}

// googleKey is the part of a Google credentials file read here.
type googleKey struct {
	Type         string `json:"type"`
	ClientEmail  string `json:"client_email"`
	PrivateKey   string `json:"private_key"`
	PrivateKeyID string `json:"private_key_id"`
	TokenURI     string `json:"token_uri"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	RefreshToken string `json:"refresh_token"`
}

// newGCPMinter parses a gcpServiceAccountKey; the error is a *FieldError
// naming the Secret, never the key.
func newGCPMinter(secret, keyJSON string, opts Options) (minter, error) {
	bad := func(reason string) error {
		return &FieldError{Secret: secret, Field: "gcpServiceAccountKey", Reason: reason, Err: errInvalid}
	}
	var k googleKey
	if err := json.Unmarshal([]byte(keyJSON), &k); err != nil {
		return nil, bad("not a JSON Google credentials file")
	}
	tokenURL := k.TokenURI
	if tokenURL == "" {
		tokenURL = googleTokenURL
	}
	m := &gcpMinter{email: k.ClientEmail, http: &http.Client{Timeout: opts.TokenTimeout}, now: time.Now}
	switch k.Type {
	case "", "service_account":
		if k.ClientEmail == "" || k.PrivateKey == "" {
			return nil, bad("a service account key needs client_email and private_key")
		}
		cfg := &jwt.Config{Email: k.ClientEmail, PrivateKey: []byte(k.PrivateKey), PrivateKeyID: k.PrivateKeyID,
			Scopes: []string{googleScope}, TokenURL: tokenURL}
		m.source = cfg.TokenSource
		m.id = "gcp-service-account:" + k.ClientEmail + ":" + k.PrivateKeyID
	case "authorized_user":
		if k.ClientID == "" || k.RefreshToken == "" {
			return nil, bad("an authorized_user key needs client_id and refresh_token")
		}
		cfg := &oauth2.Config{ClientID: k.ClientID, ClientSecret: k.ClientSecret, Scopes: []string{googleScope},
			Endpoint: oauth2.Endpoint{TokenURL: tokenURL, AuthStyle: oauth2.AuthStyleInParams}}
		refresh := k.RefreshToken
		m.source = func(ctx context.Context) oauth2.TokenSource {
			return cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: refresh})
		}
		m.id = "gcp-authorized-user:" + k.ClientID + ":" + digest(refresh)[:16]
	default:
		return nil, bad("Google credentials of type " + k.Type + " are not supported here (service_account and authorized_user are)")
	}
	return m, nil
}

// apply implements minter.
func (m *gcpMinter) apply(ctx context.Context, _ string, c *source.Credentials) error {
	m.mu.Lock()
	t := m.tok
	m.mu.Unlock()
	if !t.fresh(m.now()) {
		v, err, _ := m.flight.Do("token", func() (any, error) {
			tok, err := m.source(context.WithValue(ctx, oauth2.HTTPClient, m.http)).Token()
			if err != nil {
				return nil, tokenEndpointError("Google's token endpoint", err)
			}
			t := expiringToken{value: tok.AccessToken, expires: tok.Expiry}
			if tok.Expiry.IsZero() {
				t.expires = m.now().Add(time.Hour)
			}
			m.mu.Lock()
			m.tok = t
			m.mu.Unlock()
			return t, nil
		})
		if err != nil {
			return err
		}
		t = v.(expiringToken)
	}
	c.Username, c.Password, c.BearerToken = m.email, t.value, ""
	return nil
}

// cacheIdentity implements minter.
func (m *gcpMinter) cacheIdentity() string { return m.id }
