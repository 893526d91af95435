package repocreds

import (
	"net/url"
	"regexp"
	"strings"
)

// sshLike is Argo CD's test for an SSH URL: a user before an '@', with or
// without ssh://.
var sshLike = regexp.MustCompile(`^(ssh://)?([^/:]*?)@[^@]+$`)

// normalizeURL is the form in which Argo CD compares repository URLs
// (util/git NormalizeGitURL): lowercased and trimmed, an scp-like SSH URL
// rewritten with a '/' after the host, a trailing ".git" dropped, parsed
// and printed again without "ssh://". A URL that does not parse compares
// as written. A trailing '/' is kept: a template for ".../org/" does not
// serve ".../org-other/...".
func normalizeURL(u string) string {
	raw := u
	u = strings.ToLower(strings.TrimSpace(u))
	if sshLike.MatchString(u) && !strings.HasPrefix(u, "ssh://") {
		u = "ssh://" + strings.Replace(u, ":", "/", 1)
	}
	u = strings.TrimSuffix(u, ".git")
	parsed, err := url.Parse(u)
	if err != nil {
		return raw
	}
	return strings.TrimPrefix(parsed.String(), "ssh://")
}

// sameURL reports whether two repository URLs name one repository, as
// Argo CD's SameURL.
func sameURL(a, b string) bool {
	na, nb := normalizeURL(a), normalizeURL(b)
	return na != "" && na == nb
}

// lookupForms are the normalised forms under which a repository URL finds
// its Secret, the URL itself first. An OCI registry is named with or
// without the oci:// scheme ("oci://registry.example.com/charts" and
// "registry.example.com/charts"), and Argo CD matches the two forms to
// each other when it looks up the credentials of Helm charts (the
// dependencies of a chart: a repository Secret's URL and the dependency's
// compared without "oci://", a repo-creds template of type oci as a
// prefix of "oci://" and the dependency, another one of the dependency
// without it). One lookup serves app sources and dependencies here, so
// both forms apply to both; the host and path must still be equal (or
// prefixed, for templates): credentials never go to another registry.
func lookupForms(repoURL string) []string {
	forms := []string{normalizeURL(repoURL)}
	trimmed := strings.TrimSpace(repoURL)
	switch {
	case len(trimmed) > 6 && strings.EqualFold(trimmed[:6], "oci://"):
		forms = append(forms, normalizeURL(trimmed[6:]))
	case !strings.Contains(trimmed, "://") && !sshLike.MatchString(trimmed) && registryHost(trimmed) != "":
		forms = append(forms, normalizeURL("oci://"+trimmed))
	}
	return forms
}

// registryHost returns the host[:port] of a scheme-less registry
// reference ("registry.example.com:5000/charts"), or "".
func registryHost(u string) string {
	parsed, err := url.ParseRequestURI("registry://" + u)
	if err != nil {
		return ""
	}
	return parsed.Host
}

// hostOf returns the host name of a URL (scp-like and bare host/path
// forms included), lowercased.
func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return strings.ToLower(u.Hostname())
	}
	rest := raw
	if at := strings.IndexByte(rest, '@'); at >= 0 {
		rest = rest[at+1:]
	}
	host, _, _ := strings.Cut(rest, "/")
	host, _, _ = strings.Cut(host, ":")
	return strings.ToLower(host)
}
