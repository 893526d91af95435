package helmrepo

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/registry"
	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/kubegitops/gitops/internal/helmindex"
	"github.com/kubegitops/gitops/source"
)

// newRegistryClient returns Helm's registry client for one identity. It
// never reads the user's Helm or Docker credential files for
// authentication: only creds, and only for the host of the repository
// they were configured for.
func newRegistryClient(opts Options, creds *source.Credentials, hc *http.Client) (*registry.Client, error) {
	authorizer := &auth.Client{Client: hc, Cache: auth.NewCache()}
	authorizer.Credential = func(_ context.Context, hostport string) (auth.Credential, error) {
		if creds == nil || !hostMatches(creds, hostport) {
			return auth.EmptyCredential, nil
		}
		switch httpAuth(creds) {
		case "bearer":
			return auth.Credential{AccessToken: creds.BearerToken}, nil
		case "basic":
			return auth.Credential{Username: creds.Username, Password: creds.Password}, nil
		}
		return auth.EmptyCredential, nil
	}
	copts := []registry.ClientOption{
		registry.ClientOptHTTPClient(hc),
		registry.ClientOptAuthorizer(*authorizer),
		// A file that never exists: Helm's client must not pick up the
		// host user's registry logins.
		registry.ClientOptCredentialsFile(filepath.Join(opts.CacheDir, "no-registry-config.json")),
	}
	if plainHTTP(opts, creds) {
		copts = append(copts, registry.ClientOptPlainHTTP())
	}
	c, err := registry.NewClient(copts...)
	if err != nil {
		return nil, fmt.Errorf("%w: registry client: %v", source.ErrInvalidRepository, err)
	}
	return c, nil
}

// plainHTTP reports whether OCI registries are reached over plain HTTP:
// for every registry (Options.PlainHTTP) or for the one repository whose
// credentials say insecureOCIForceHttp.
func plainHTTP(opts Options, creds *source.Credentials) bool {
	return opts.PlainHTTP || (creds != nil && creds.InsecureOCIForceHTTP)
}

// hostMatches reports whether creds were given for hostport: the
// credentials are bound to the repository host they came with (set by
// ociRepo through Scope when none is given).
func hostMatches(creds *source.Credentials, hostport string) bool {
	return creds.Scope != "" && strings.EqualFold(ociHost(creds.Scope), hostport)
}

// ociRef returns "host/path/chart" for an OCI repository.
func ociRef(r source.Repository) string {
	u := strings.TrimPrefix(repoBase(r), "oci://")
	return u + "/" + r.Chart
}

// ociHost returns the host[:port] of an OCI repository URL or scope.
func ociHost(u string) string {
	u = strings.TrimPrefix(u, "oci://")
	u = strings.TrimPrefix(strings.TrimPrefix(u, "https://"), "http://")
	host, _, _ := strings.Cut(u, "/")
	return host
}

// scoped returns r with its credentials bound to r's registry host.
func scoped(r source.Repository) source.Repository {
	if r.Credentials != nil && r.Credentials.Scope == "" {
		c := *r.Credentials
		c.Scope = "oci://" + ociHost(r.URL)
		r.Credentials = &c
	}
	return r
}

func (s *Source) resolveOCI(ctx context.Context, r source.Repository, revision string) (string, error) {
	r = scoped(r)
	if err := s.checkOCI(r); err != nil {
		return "", err
	}
	ref := ociRef(r)
	key := "tags\x00" + r.Credentials.Identity() + "\x00" + ref
	v, err := s.indexes.get(ctx, key, func(ctx context.Context) (any, error) {
		c, err := s.clientsFor(r)
		if err != nil {
			return nil, err
		}
		s.tagRequests.Add(1)
		tags, err := withContext(ctx, func() ([]string, error) { return c.oci.Tags(ref) })
		if err != nil {
			return nil, ociErr(err)
		}
		return tags, nil
	})
	if err != nil {
		return "", err
	}
	tags := v.([]string)
	if len(tags) == 0 {
		return "", fmt.Errorf("%w: no chart %q in the registry", ErrChartNotFound, r.Chart)
	}
	// Helm's client lists the tags as versions, highest first; the
	// choice among them is Helm's, made where the index's is made.
	version, err := helmindex.Select(tags, revision)
	if err != nil {
		return "", fmt.Errorf("%w: chart %s: %w", source.ErrRevisionNotFound, r.Chart, err)
	}
	return version, nil
}

func (s *Source) pullOCI(ctx context.Context, r source.Repository, version string) ([]byte, error) {
	r = scoped(r)
	if err := s.checkOCI(r); err != nil {
		return nil, err
	}
	c, err := s.clientsFor(r)
	if err != nil {
		return nil, err
	}
	ref := ociRef(r) + ":" + strings.ReplaceAll(version, "+", "_")
	s.downloads.Add(1)
	res, err := withContext(ctx, func() (*registry.PullResult, error) { return c.oci.Pull(ref) })
	if err != nil {
		return nil, ociErr(err)
	}
	if res.Chart == nil || len(res.Chart.Data) == 0 {
		return nil, fmt.Errorf("%w: %s %s has no chart layer", ErrChartNotFound, r.Chart, version)
	}
	if res.Chart.Meta != nil && (res.Chart.Meta.Name != r.Chart || res.Chart.Meta.Version != version) {
		return nil, fmt.Errorf("%w: the artifact at %s %s holds chart %s %s", ErrChartNotFound, r.Chart, version, res.Chart.Meta.Name, res.Chart.Meta.Version)
	}
	return res.Chart.Data, nil
}

// checkOCI applies the URL policy to the registry (Helm's client dials
// through our transport, which checks every request again).
func (s *Source) checkOCI(r source.Repository) error {
	scheme := "https"
	if plainHTTP(s.opts, r.Credentials) {
		scheme = "http"
	}
	u, err := urlParse(scheme + "://" + ociHost(r.URL))
	if err != nil {
		return fmt.Errorf("%w: unparsable registry host", source.ErrInvalidRepository)
	}
	return s.opts.Policy.CheckURL(u)
}

// withContext runs a call of Helm's registry client (which takes no
// context) and returns when it ends or ctx does; the call itself is
// bounded by the HTTP client's timeout.
func withContext[T any](ctx context.Context, call func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := call()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// ociErr maps registry errors onto the source sentinels without quoting
// the registry's message (which may echo request headers).
func ociErr(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "server gave HTTP response to HTTPS client"):
		// net/http's words for a registry that speaks plain HTTP.
		return ErrPlainHTTPRegistry
	case strings.Contains(msg, "401") || strings.Contains(msg, "403") || strings.Contains(strings.ToLower(msg), "unauthorized"):
		return fmt.Errorf("%w: registry refused the credentials", source.ErrAuthentication)
	case strings.Contains(msg, "404") || strings.Contains(strings.ToLower(msg), "not found"):
		return fmt.Errorf("%w: no such chart or version in the registry", ErrChartNotFound)
	}
	return classify(err)
}

func urlParse(s string) (*url.URL, error) { return url.Parse(s) }
