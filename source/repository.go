package source

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// Repository names a repository and the credentials to read it with.
type Repository struct {
	// URL is the clone URL: https://host/org/repo(.git), http://...,
	// ssh://user@host[:port]/path, the scp-like user@host:path, file:///path,
	// or a local folder path for source/dir. User information written into
	// an http(s) URL ("https://user:token@host/...") is treated as
	// credentials: it is stripped from every message and bound to that
	// URL's scheme and host like Credentials.
	URL string `json:"url"`
	// Chart names a Helm chart when URL is a Helm chart repository (an
	// HTTP(S) repository with an index.yaml) or an OCI registry
	// ("oci://host/path", or "host/path" with Credentials.EnableOCI); it is
	// empty for Git and folders. Sources that read charts need it; the
	// others ignore it.
	Chart string `json:"chart,omitempty"`
	// TagPrefix, for Git, scopes semver revisions to the tags that start
	// with it (an Application source's tagPrefix): a constraint is
	// evaluated over those tags with the prefix stripped, and an exact
	// version names the tag TagPrefix+version. Other sources ignore it.
	TagPrefix string `json:"tagPrefix,omitempty"`
	// Credentials authenticate to the repository's host; nil for anonymous
	// access. They are only ever sent to Credentials.Scope (by default the
	// exact scheme and host of URL).
	Credentials *Credentials `json:"credentials,omitempty"`
}

// String returns the URL with any user information removed. It never
// contains a secret.
func (r Repository) String() string { return RedactURL(r.URL) }

// GoString implements fmt.GoStringer without secrets.
func (r Repository) GoString() string {
	creds := "nil"
	if r.Credentials != nil {
		creds = r.Credentials.String()
	}
	return fmt.Sprintf("source.Repository{URL: %q, Credentials: %s}", RedactURL(r.URL), creds)
}

// Format implements fmt.Formatter so that every verb (%v, %+v, %#v, %d,
// ...) prints the redacted form.
func (r Repository) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, r.GoString())
		return
	}
	fmt.Fprint(f, r.String())
}

// MarshalJSON encodes the redacted URL and the redacted credentials: a
// Repository never serialises a secret, so it does not round-trip through
// JSON when its URL carries a password.
func (r Repository) MarshalJSON() ([]byte, error) {
	type redacted struct {
		URL         string       `json:"url"`
		Chart       string       `json:"chart,omitempty"`
		TagPrefix   string       `json:"tagPrefix,omitempty"`
		Credentials *Credentials `json:"credentials,omitempty"`
	}
	return json.Marshal(redacted{URL: RedactURL(r.URL), Chart: r.Chart, TagPrefix: r.TagPrefix, Credentials: r.Credentials})
}

// RedactURL returns raw with the password (and the user name of http(s)
// URLs) removed, for messages. Strings that do not parse as URLs are
// returned with anything up to a last '@' before the first '/' replaced,
// which covers scp-like "user:pass@host:path" forms.
func RedactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" && u.Host != "" {
		if u.User == nil {
			return u.String()
		}
		if u.Scheme == "ssh" {
			// The user of an ssh URL ("git") is part of the address, not a
			// secret; a password is.
			u.User = url.User(u.User.Username())
			return u.String()
		}
		u.User = nil
		return u.String()
	}
	// Not a parsable URL: cut any user information by hand. The authority
	// runs from after "scheme://" (if any) to the next '/'.
	scheme, rest := "", raw
	if i := strings.Index(raw, "://"); i >= 0 {
		scheme, rest = raw[:i+3], raw[i+3:]
	}
	authority := rest
	if i := strings.IndexByte(authority, '/'); i >= 0 {
		authority = authority[:i]
	}
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		user := authority[:at]
		if scheme != "" || strings.ContainsRune(user, ':') {
			return scheme + "redacted@" + rest[at+1:]
		}
	}
	return raw
}

// RepositoryKey returns a canonical key for a repository URL that ignores
// the differences between the URLs a Git host gives for one repository: the
// scheme, the user, the port of the default scheme, letter case of the
// host, a trailing ".git" or "/". "https://GitHub.com/org/repo.git",
// "git@github.com:org/repo" and "ssh://git@github.com/org/repo" all map to
// "github.com/org/repo". Webhook hints and poll targets are matched on it.
func RepositoryKey(raw string) string {
	raw = strings.TrimSpace(raw)
	host, path := "", ""
	if u, err := url.Parse(raw); err == nil && u.Scheme == "file" {
		return "file://" + strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), ".git")
	} else if err == nil && u.Scheme != "" && u.Host != "" {
		host = strings.ToLower(u.Hostname())
		if p := u.Port(); p != "" && !isDefaultPort(u.Scheme, p) {
			host += ":" + p
		}
		path = u.Path
	} else if at, colon := strings.IndexByte(raw, '@'), strings.IndexByte(raw, ':'); colon > 0 && !strings.Contains(raw[:colon], "/") {
		// scp-like user@host:path
		h := raw[:colon]
		if at >= 0 && at < colon {
			h = raw[at+1 : colon]
		}
		host = strings.ToLower(h)
		path = raw[colon+1:]
	} else {
		return strings.TrimSuffix(strings.TrimSuffix(raw, "/"), ".git")
	}
	path = strings.Trim(path, "/")
	path = strings.TrimSuffix(path, ".git")
	return host + "/" + path
}

func isDefaultPort(scheme, port string) bool {
	switch scheme {
	case "https":
		return port == "443"
	case "http":
		return port == "80"
	case "ssh":
		return port == "22"
	}
	return false
}
