package helmindex

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/kubegitops/gitops/source"
)

// ResolveReferenceURL resolves refURL against the repository URL baseURL
// as Helm's repo.ResolveReferenceURL does: an absolute refURL is returned
// unchanged; a relative one is resolved against baseURL (read as a
// directory) and takes baseURL's query. The error wraps ErrInvalidURL and
// quotes no user information.
func ResolveReferenceURL(baseURL, refURL string) (string, error) {
	ref, err := url.Parse(refURL)
	if err != nil {
		return "", fmt.Errorf("%w: chart URL %s does not parse", ErrInvalidURL, source.RedactURL(refURL))
	}
	if ref.IsAbs() {
		return refURL, nil
	}
	base, err := url.Parse(baseURL)
	if err != nil {
		return "", fmt.Errorf("%w: repository URL %s does not parse", ErrInvalidURL, source.RedactURL(baseURL))
	}
	base.RawPath = strings.TrimSuffix(base.RawPath, "/") + "/"
	base.Path = strings.TrimSuffix(base.Path, "/") + "/"
	resolved := base.ResolveReference(ref)
	resolved.RawQuery = base.RawQuery
	return resolved.String(), nil
}

// IndexURL is the URL of the index.yaml of the repository at repoURL, as
// Helm downloads it (its query kept).
func IndexURL(repoURL string) (string, error) {
	return ResolveReferenceURL(repoURL, "index.yaml")
}
