package scm

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/internal/strictload"
)

// SecretTypeLabel and SecretTypeSCMCreds mark a Secret a tokenRef may
// name under Options.TokenRefStrict (Argo CD's label).
const (
	SecretTypeLabel    = "argocd.argoproj.io/secret-type"
	SecretTypeSCMCreds = "scm-creds"
)

// Options are what Argo CD's forge providers share. Start from
// DefaultOptions.
type Options struct {
	// Objects reads tokenRef Secrets (in the set's namespace), caRef
	// ConfigMaps, and GitHub App Secrets (in ControllerNamespace). Nil:
	// only anonymous access.
	Objects appset.Objects
	// ControllerNamespace is where appSecretName Secrets are read (Argo
	// CD's namespace). Default "argocd".
	ControllerNamespace string
	// TokenRefStrict requires every tokenRef Secret to be labelled
	// argocd.argoproj.io/secret-type: scm-creds (Argo CD's
	// applicationsetcontroller.enable.tokenref.strict.mode).
	TokenRefStrict bool
	// Timeout bounds each request to a forge. Default 30 seconds.
	Timeout time.Duration
	// Transport is the base transport (a proxy, a test's); nil:
	// http.DefaultTransport.
	Transport http.RoundTripper
	// RootCAPEM are PEM certificates trusted besides the system's (the
	// content of Argo CD's --scm-root-ca-path, read by the host); a
	// config's caRef adds its own.
	RootCAPEM []byte
	// MaxRateLimitWait is the longest a provider waits for a forge's
	// rate limit to lift (Retry-After, or a reset time) before asking
	// again, at most MaxRetries times; a longer wait fails with a
	// *RateLimitError. Default 10 seconds.
	MaxRateLimitWait time.Duration
	// MaxRetries bounds the retries of one rate-limited request. Default 3.
	MaxRetries int
}

// DefaultOptions returns 30-second requests, rate limits waited out up to
// 10 seconds three times, and the namespace "argocd".
func DefaultOptions() Options {
	return Options{ControllerNamespace: "argocd", Timeout: 30 * time.Second, MaxRateLimitWait: 10 * time.Second, MaxRetries: 3}
}

// WithDefaults fills what o leaves zero from DefaultOptions.
func (o Options) WithDefaults() Options {
	d := DefaultOptions()
	if o.ControllerNamespace == "" {
		o.ControllerNamespace = d.ControllerNamespace
	}
	if o.Timeout <= 0 {
		o.Timeout = d.Timeout
	}
	if o.MaxRateLimitWait <= 0 {
		o.MaxRateLimitWait = d.MaxRateLimitWait
	}
	if o.MaxRetries <= 0 {
		o.MaxRetries = d.MaxRetries
	}
	return o
}

// SecretRef names a key of a Secret in the set's namespace (Argo CD's
// tokenRef, passwordRef, appPasswordRef, accessTokenRef).
type SecretRef struct {
	// SecretName is the Secret's name.
	SecretName string `json:"secretName"`
	// Key is the key in the Secret.
	Key string `json:"key"`
}

// ConfigMapKeyRef names a key of a ConfigMap in the set's namespace
// (Argo CD's caRef).
type ConfigMapKeyRef struct {
	// ConfigMapName is the ConfigMap's name.
	ConfigMapName string `json:"configMapName"`
	// Key is the key in the ConfigMap.
	Key string `json:"key"`
}

// ConfigError is a provider block that does not decode: an unknown field,
// a value of the wrong type, a required field missing.
type ConfigError struct {
	// Provider is the block's key ("github").
	Provider string
	// Field is the field at fault ("tokenRef.key"), when known.
	Field string
	// Err is the decoding error.
	Err error
}

// Error implements error.
func (e *ConfigError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s.%s: %v", e.Provider, e.Field, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Provider, e.Err)
}

// Unwrap returns the cause.
func (e *ConfigError) Unwrap() error { return e.Err }

// Decode decodes a provider block strictly into v: an unknown or
// duplicate field, or a value of the wrong type, is a *ConfigError naming
// the field.
func Decode(provider string, cfg json.RawMessage, v any) error {
	if fes := strictload.Unmarshal(cfg, v); len(fes) > 0 {
		errs := make([]error, len(fes))
		for i, fe := range fes {
			errs[i] = &ConfigError{Provider: provider, Field: fe.Path, Err: fe.Err}
		}
		return errors.Join(errs...)
	}
	return nil
}

// Required fails with a *ConfigError when a required field is empty.
func Required(provider string, fields map[string]string) error {
	var errs []error
	for name, v := range fields {
		if v == "" {
			errs = append(errs, &ConfigError{Provider: provider, Field: name, Err: errors.New("is required")})
		}
	}
	return errors.Join(errs...)
}

// SecretValue reads a key of a Secret of namespace, as Argo CD's
// GetSecretRef does: nil ref is "" (anonymous); under TokenRefStrict the
// Secret must be labelled scm-creds. Errors name the Secret and key,
// never the value.
func (o Options) SecretValue(ctx context.Context, namespace string, ref *SecretRef) (string, error) {
	if ref == nil {
		return "", nil
	}
	if o.Objects == nil {
		return "", fmt.Errorf("secret %s/%s: no cluster to read it from", namespace, ref.SecretName)
	}
	s, err := o.Objects.Secret(ctx, namespace, ref.SecretName)
	if err != nil {
		return "", fmt.Errorf("secret %s/%s: %w", namespace, ref.SecretName, err)
	}
	if o.TokenRefStrict && s.Labels[SecretTypeLabel] != SecretTypeSCMCreds {
		return "", fmt.Errorf("secret %s/%s is not labelled %s: %s (token ref strict mode)", namespace, ref.SecretName, SecretTypeLabel, SecretTypeSCMCreds)
	}
	v, ok := s.Data[ref.Key]
	if !ok {
		return "", fmt.Errorf("secret %s/%s has no key %q", namespace, ref.SecretName, ref.Key)
	}
	return string(v), nil
}

// HTTPClient returns the client a provider talks to a forge with: each
// request bounded by Timeout, rate limits waited out (RateLimits), the
// system's CAs plus RootCAs plus the caRef's PEM, or no verification
// under insecure.
func (o Options) HTTPClient(ctx context.Context, namespace string, caRef *ConfigMapKeyRef, insecure bool) (*http.Client, error) {
	o = o.WithDefaults()
	base := o.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	if insecure || len(o.RootCAPEM) > 0 || caRef != nil {
		t, ok := base.(*http.Transport)
		if !ok {
			return nil, errors.New("insecure, a root CA or caRef needs an *http.Transport")
		}
		t = t.Clone()
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		if t.TLSClientConfig != nil {
			tc = t.TLSClientConfig.Clone()
		}
		if insecure {
			tc.InsecureSkipVerify = true // the config's insecure: true, as in Argo CD
		} else {
			pool, err := o.certPool(ctx, namespace, caRef)
			if err != nil {
				return nil, err
			}
			tc.RootCAs = pool
		}
		t.TLSClientConfig = tc
		base = t
	}
	return &http.Client{Timeout: o.Timeout, Transport: &RateLimits{Base: base, MaxWait: o.MaxRateLimitWait, MaxRetries: o.MaxRetries}}, nil
}

// certPool is the system's CAs, RootCAPEM and the caRef's PEM.
func (o Options) certPool(ctx context.Context, namespace string, caRef *ConfigMapKeyRef) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if len(o.RootCAPEM) > 0 && !pool.AppendCertsFromPEM(o.RootCAPEM) {
		return nil, errors.New("root CA: no PEM certificate")
	}
	if caRef == nil {
		return pool, nil
	}
	if o.Objects == nil {
		return nil, fmt.Errorf("caRef configmap %s/%s: no cluster to read it from", namespace, caRef.ConfigMapName)
	}
	data, err := o.Objects.ConfigMap(ctx, namespace, caRef.ConfigMapName)
	if err != nil {
		return nil, fmt.Errorf("caRef configmap %s/%s: %w", namespace, caRef.ConfigMapName, err)
	}
	pem, ok := data[caRef.Key]
	if !ok {
		return nil, fmt.Errorf("caRef configmap %s/%s has no key %q", namespace, caRef.ConfigMapName, caRef.Key)
	}
	if !pool.AppendCertsFromPEM([]byte(pem)) {
		return nil, fmt.Errorf("caRef configmap %s/%s key %q holds no PEM certificate", namespace, caRef.ConfigMapName, caRef.Key)
	}
	return pool, nil
}

// CloneURL picks a repository's clone URL by the generator's
// cloneProtocol: "ssh" (and "" where ssh is the forge's default) the SSH
// URL, "https" the HTTPS one; another protocol is an error naming both.
func CloneURL(protocol, defaultProtocol, sshURL, httpsURL string) (string, error) {
	if protocol == "" {
		protocol = defaultProtocol
	}
	switch strings.ToLower(protocol) {
	case "ssh":
		return sshURL, nil
	case "https":
		return httpsURL, nil
	}
	return "", fmt.Errorf("cloneProtocol %q: want ssh or https", protocol)
}

// HasAll reports whether got holds every one of want (a pull request's
// labels against a config's labels).
func HasAll(got, want []string) bool {
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}
