package repocreds

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
	"golang.org/x/sync/singleflight"

	"github.com/kubegitops/gitops/source"
)

// Azure's well-known values, as Argo CD uses them.
const (
	// azureDevOpsScope is Azure DevOps' resource in Microsoft Entra ID.
	azureDevOpsScope = "499b84ac-1321-427f-aa17-267ca6975798/.default"
	// azureEmptyGUID is the user name that goes with an Azure Container
	// Registry refresh token.
	azureEmptyGUID = "00000000-0000-0000-0000-000000000000"
	// defaultAzureAuthority is the public cloud's Entra ID.
	defaultAzureAuthority = "https://login.microsoftonline.com/"
	// defaultARMResource is Azure Resource Manager, whose token an Azure
	// Container Registry exchanges for a refresh token.
	defaultARMResource = "https://management.core.windows.net"
	// jwtBearerAssertion is the client_assertion_type of a federated
	// token.
	jwtBearerAssertion = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
)

// AzureWorkloadIdentity is the Microsoft Entra workload identity of the
// process, used by the Secrets that set useAzureWorkloadIdentity: what
// Azure's workload identity webhook gives a pod in its environment
// (AzureWorkloadIdentityFromEnv). Its federated token (a Kubernetes
// service account token the kubelet rotates in TokenFile) is exchanged for
// an Entra ID token on each refresh; that token is the bearer token of an
// Azure DevOps Git repository, and for an Azure Container Registry (a
// Helm or OCI repository) it is exchanged at the registry for a refresh
// token, the password of user 00000000-0000-0000-0000-000000000000, as
// Argo CD does.
type AzureWorkloadIdentity struct {
	// ClientID is the application (client) id (AZURE_CLIENT_ID).
	ClientID string
	// TenantID is the directory (tenant) id (AZURE_TENANT_ID).
	TenantID string
	// TokenFile holds the federated token (AZURE_FEDERATED_TOKEN_FILE),
	// read again for every exchange.
	TokenFile string
	// AuthorityHost is Entra ID's address (AZURE_AUTHORITY_HOST).
	// Default https://login.microsoftonline.com/.
	AuthorityHost string
	// ARMResource is the resource whose token a registry exchanges
	// (AZURE_ARM_TOKEN_RESOURCE). Default
	// https://management.core.windows.net.
	ARMResource string
}

// AzureWorkloadIdentityFromEnv reads the identity from the variables
// Azure's workload identity webhook sets (and Argo CD reads through the
// Azure SDK), with getenv (os.Getenv for the process's own).
func AzureWorkloadIdentityFromEnv(getenv func(string) string) AzureWorkloadIdentity {
	return AzureWorkloadIdentity{
		ClientID: getenv("AZURE_CLIENT_ID"), TenantID: getenv("AZURE_TENANT_ID"),
		TokenFile: getenv("AZURE_FEDERATED_TOKEN_FILE"), AuthorityHost: getenv("AZURE_AUTHORITY_HOST"),
		ARMResource: getenv("AZURE_ARM_TOKEN_RESOURCE"),
	}
}

// configured reports what is missing for the identity to be used, or "".
func (a AzureWorkloadIdentity) missing() string {
	var m []string
	if a.ClientID == "" {
		m = append(m, "AZURE_CLIENT_ID")
	}
	if a.TenantID == "" {
		m = append(m, "AZURE_TENANT_ID")
	}
	if a.TokenFile == "" {
		m = append(m, "AZURE_FEDERATED_TOKEN_FILE")
	}
	return strings.Join(m, ", ")
}

// entraClient obtains Entra ID tokens of one application, by client
// credentials: a federated token read from a file (workload identity) or
// a client secret (service principal). Tokens are kept per scope until
// refreshBefore their expiry.
type entraClient struct {
	tokenURL  string
	clientID  string
	secret    string                 // service principal
	assertion func() (string, error) // workload identity
	http      *http.Client
	now       func() time.Time

	flight singleflight.Group
	mu     sync.Mutex
	tokens map[string]expiringToken
}

func newEntraClient(authority, tenant, clientID string, timeout time.Duration) *entraClient {
	if authority == "" {
		authority = defaultAzureAuthority
	}
	tokenURL := strings.TrimSuffix(authority, "/") + "/" + url.PathEscape(tenant) + "/oauth2/v2.0/token"
	return &entraClient{tokenURL: tokenURL, clientID: clientID, http: &http.Client{Timeout: timeout},
		now: time.Now, tokens: map[string]expiringToken{}}
}

// token returns a token for scope.
func (e *entraClient) token(ctx context.Context, scope string) (string, error) {
	e.mu.Lock()
	t := e.tokens[scope]
	e.mu.Unlock()
	if t.fresh(e.now()) {
		return t.value, nil
	}
	v, err, _ := e.flight.Do(scope, func() (any, error) {
		cfg := clientcredentials.Config{ClientID: e.clientID, ClientSecret: e.secret, TokenURL: e.tokenURL,
			Scopes: []string{scope}, AuthStyle: oauth2.AuthStyleInParams}
		if e.assertion != nil {
			a, err := e.assertion()
			if err != nil {
				return nil, err
			}
			cfg.EndpointParams = url.Values{"client_assertion": {a}, "client_assertion_type": {jwtBearerAssertion}}
		}
		tok, err := cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, e.http))
		if err != nil {
			return nil, tokenEndpointError("Microsoft Entra ID", err)
		}
		t := expiringToken{value: tok.AccessToken, expires: tok.Expiry}
		if tok.Expiry.IsZero() {
			t.expires = e.now().Add(time.Hour)
		}
		e.mu.Lock()
		e.tokens[scope] = t
		e.mu.Unlock()
		return t.value, nil
	})
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

// tokenEndpointError describes a failed token request without what the
// endpoint answered (which may echo the request).
func tokenEndpointError(who string, err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		return fmt.Errorf("%s refused the token request (status %d): %w", who, re.Response.StatusCode, source.ErrAuthentication)
	}
	return fmt.Errorf("%s could not be reached for a token: %w", who, source.ErrUnavailable)
}

// azureMinter mints the credentials of an Azure repository: an Entra ID
// token as the bearer token of an Azure DevOps Git repository, or, for a
// registry (acr), a refresh token from the registry's exchange.
type azureMinter struct {
	entra    *entraClient
	identity string
	acr      bool
	arm      string

	flight singleflight.Group
	mu     sync.Mutex
	acrTok map[string]expiringToken
}

// apply implements minter.
func (m *azureMinter) apply(ctx context.Context, repoURL string, c *source.Credentials) error {
	if !m.acr {
		tok, err := m.entra.token(ctx, azureDevOpsScope)
		if err != nil {
			return err
		}
		c.BearerToken = tok
		return nil
	}
	return m.applyACR(ctx, repoURL, c)
}

// cacheIdentity implements minter.
func (m *azureMinter) cacheIdentity() string { return m.identity }

// workloadIdentityMinter returns the minter of a Secret with
// useAzureWorkloadIdentity.
func workloadIdentityMinter(secret string, acr bool, opts Options) (minter, error) {
	a := opts.Azure
	if miss := a.missing(); miss != "" {
		return nil, &FieldError{Secret: secret, Field: "useAzureWorkloadIdentity", Err: source.ErrAuthentication,
			Reason: "no Azure workload identity is configured for this process (" + miss + " unset)"}
	}
	e := newEntraClient(a.AuthorityHost, a.TenantID, a.ClientID, opts.TokenTimeout)
	file := a.TokenFile
	e.assertion = func() (string, error) {
		b, err := os.ReadFile(file)
		if err != nil || len(strings.TrimSpace(string(b))) == 0 {
			return "", &FieldError{Secret: secret, Field: "useAzureWorkloadIdentity", Err: source.ErrAuthentication,
				Reason: "the federated token file (AZURE_FEDERATED_TOKEN_FILE) cannot be read"}
		}
		return strings.TrimSpace(string(b)), nil
	}
	arm := a.ARMResource
	if arm == "" {
		arm = defaultARMResource
	}
	return &azureMinter{entra: e, acr: acr, arm: strings.TrimSuffix(arm, "/"), acrTok: map[string]expiringToken{},
		identity: "azure-workload-identity:" + a.TenantID + ":" + a.ClientID}, nil
}

// servicePrincipalMinter returns the minter of a Secret with an Azure
// service principal (Azure DevOps Git repositories only, as Argo CD).
func servicePrincipalMinter(tenant, clientID, secret, authority string, opts Options) minter {
	e := newEntraClient(authority, tenant, clientID, opts.TokenTimeout)
	e.secret = secret
	return &azureMinter{entra: e, identity: "azure-service-principal:" + authority + ":" + tenant + ":" + clientID}
}

// applyACR obtains an Azure Container Registry refresh token for the
// registry of repoURL: the
// registry's challenge names its exchange, where an Entra ID token of
// Azure Resource Manager is traded for a refresh token.
func (m *azureMinter) applyACR(ctx context.Context, repoURL string, c *source.Credentials) error {
	host := registryOf(repoURL)
	if host == "" {
		return fmt.Errorf("azure workload identity: %q names no registry: %w", source.RedactURL(repoURL), source.ErrInvalidRepository)
	}
	m.mu.Lock()
	t := m.acrTok[host]
	m.mu.Unlock()
	if !t.fresh(m.entra.now()) {
		v, err, _ := m.flight.Do(host, func() (any, error) { return m.exchange(ctx, c, host) })
		if err != nil {
			return err
		}
		t = v.(expiringToken)
	}
	c.Username, c.Password, c.BearerToken = azureEmptyGUID, t.value, ""
	return nil
}

// exchange runs the registry's challenge and exchange for host.
func (m *azureMinter) exchange(ctx context.Context, c *source.Credentials, host string) (expiringToken, error) {
	hc, err := registryClient(c, m.entra.http.Timeout)
	if err != nil {
		return expiringToken{}, err
	}
	scheme := "https"
	if c.InsecureOCIForceHTTP {
		scheme = "http"
	}
	realm, service, err := acrChallenge(ctx, hc, scheme+"://"+host+"/v2/")
	if err != nil {
		return expiringToken{}, err
	}
	arm, err := m.entra.token(ctx, m.arm+"/.default")
	if err != nil {
		return expiringToken{}, err
	}
	exchangeURL, err := url.Parse(realm)
	if err != nil || exchangeURL.Host == "" {
		return expiringToken{}, fmt.Errorf("registry %s: its challenge names no realm: %w", host, source.ErrAuthentication)
	}
	exchangeURL.Path, exchangeURL.RawQuery = "/oauth2/exchange", ""
	form := url.Values{"grant_type": {"access_token"}, "service": {service}, "access_token": {arm}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, exchangeURL.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return expiringToken{}, fmt.Errorf("registry %s: %w", host, source.ErrInvalidRepository)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := hc.Do(req)
	if err != nil {
		return expiringToken{}, fmt.Errorf("registry %s: token exchange: %w", host, source.ErrUnavailable)
	}
	defer resp.Body.Close()
	var out struct {
		RefreshToken string `json:"refresh_token"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&out) != nil || out.RefreshToken == "" {
		return expiringToken{}, fmt.Errorf("registry %s refused the token exchange (status %d): %w", host, resp.StatusCode, source.ErrAuthentication)
	}
	t := expiringToken{value: out.RefreshToken, expires: jwtExpiry(out.RefreshToken)}
	m.mu.Lock()
	m.acrTok[host] = t
	m.mu.Unlock()
	return t, nil
}

// acrChallenge asks the registry for its Bearer challenge: the realm and
// service of its token server.
func acrChallenge(ctx context.Context, hc *http.Client, v2 string) (realm, service string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v2, nil)
	if err != nil {
		return "", "", fmt.Errorf("registry challenge: %w", source.ErrInvalidRepository)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", "", fmt.Errorf("registry %s could not be reached for its challenge: %w", req.URL.Host, source.ErrUnavailable)
	}
	resp.Body.Close()
	params, ok := bearerChallenge(resp.Header.Get("Www-Authenticate"))
	if resp.StatusCode != http.StatusUnauthorized || !ok || params["realm"] == "" || params["service"] == "" {
		return "", "", fmt.Errorf("registry %s did not issue a Bearer challenge with a realm and a service: %w", req.URL.Host, source.ErrAuthentication)
	}
	return params["realm"], params["service"], nil
}

// bearerChallenge parses `Bearer realm="...",service="..."`.
func bearerChallenge(h string) (map[string]string, bool) {
	scheme, rest, _ := strings.Cut(strings.TrimSpace(h), " ")
	if !strings.EqualFold(scheme, "bearer") {
		return nil, false
	}
	params := map[string]string{}
	for _, kv := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if ok {
			params[strings.ToLower(k)] = strings.Trim(v, `"`)
		}
	}
	return params, true
}

// jwtExpiry returns the exp claim of a JWT (not verified: only a hint of
// when to refresh), or now when it has none (the token is then not kept).
func jwtExpiry(tok string) time.Time {
	parts := strings.Split(tok, ".")
	if len(parts) == 3 {
		if payload, err := base64.RawURLEncoding.DecodeString(parts[1]); err == nil {
			var claims struct {
				Exp int64 `json:"exp"`
			}
			if json.Unmarshal(payload, &claims) == nil && claims.Exp > 0 {
				return time.Unix(claims.Exp, 0)
			}
		}
	}
	return time.Now()
}

// registryOf returns the host[:port] of a registry URL or scope
// ("oci://host/path", "https://host", "host/path").
func registryOf(u string) string {
	u = strings.TrimSpace(u)
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
	}
	host, _, _ := strings.Cut(u, "/")
	return host
}

// registryClient returns an HTTP client with the repository's trust (CA,
// insecure) and proxy, for the challenge and the exchange.
func registryClient(c *source.Credentials, timeout time.Duration) (*http.Client, error) {
	cfg, err := c.TLSConfig()
	if err != nil {
		return nil, err
	}
	proxy, err := c.ProxyFunc()
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg
	if proxy != nil {
		tr.Proxy = proxy
	}
	return &http.Client{Timeout: timeout, Transport: tr}, nil
}
