package helmindex

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops/source"
)

// Index is a parsed index.yaml: Helm's repo.IndexFile, field for field.
type Index struct {
	// ServerInfo is ChartMuseum's server information; unused.
	ServerInfo map[string]any `json:"serverInfo,omitempty"`
	// APIVersion is the index format's version ("v1").
	APIVersion string `json:"apiVersion"`
	// Generated is when the repository wrote the index.
	Generated time.Time `json:"generated"`
	// Entries are the versions of each chart, highest first once parsed.
	Entries map[string][]*ChartVersion `json:"entries"`
	// PublicKeys are the repository's provenance keys; unused.
	PublicKeys []string `json:"publicKeys,omitempty"`
	// Annotations are the repository's own, uninterpreted.
	Annotations map[string]string `json:"annotations,omitempty"`

	repo string // the repository URL, for errors and chart URLs
}

// ChartVersion is one version of a chart in an index: Helm's
// repo.ChartVersion, field for field (the deprecated fields are accepted,
// as Helm's strict reading accepts them, and ignored).
type ChartVersion struct {
	*chart.Metadata
	// URLs are where the archive is, relative to the repository or
	// absolute; the first is used.
	URLs []string `json:"urls"`
	// Created is when the version was published.
	Created time.Time `json:"created,omitempty"`
	// Removed marks a version withdrawn by the repository.
	Removed bool `json:"removed,omitempty"`
	// Digest is the archive's SHA-256 (hex, optionally "sha256:"-prefixed).
	Digest string `json:"digest,omitempty"`

	// ChecksumDeprecated is Helm 2's checksum; ignored.
	ChecksumDeprecated string `json:"checksum,omitempty"`
	// EngineDeprecated is Helm 2's engine; ignored.
	EngineDeprecated string `json:"engine,omitempty"`
	// TillerVersionDeprecated is Helm 2's tillerVersion; ignored.
	TillerVersionDeprecated string `json:"tillerVersion,omitempty"`
	// URLDeprecated is Helm 2's url; ignored.
	URLDeprecated string `json:"url,omitempty"`
}

// Parse reads the index.yaml of the repository at repoURL as Helm's
// repo.LoadIndexFile does: JSON when the bytes are valid JSON, else YAML
// read strictly (an unknown field or a duplicate key is an error); entries
// that are empty or fail Helm's chart validation are dropped (except the
// duplicate-dependency error Helm tolerates, helm#12748); each chart's
// versions are sorted highest first. Past maxBytes (when > 0), empty, not
// an index, or without apiVersion, it returns an *Error naming repoURL.
func Parse(repoURL string, data []byte, maxBytes int64) (*Index, error) {
	fail := func(err error) error { return &Error{Repository: source.RedactURL(repoURL), Err: err} }
	switch {
	case maxBytes > 0 && int64(len(data)) > maxBytes:
		return nil, fail(fmt.Errorf("%w: more than %d bytes", ErrTooLarge, maxBytes))
	case len(strings.TrimSpace(string(data))) == 0:
		return nil, fail(ErrEmpty)
	}
	idx := &Index{repo: repoURL}
	var err error
	if json.Valid(data) {
		err = json.Unmarshal(data, idx)
	} else {
		err = yaml.UnmarshalStrict(data, idx)
	}
	if err != nil {
		// The decoder's message quotes only field names and types.
		return nil, fail(fmt.Errorf("%w: %v", ErrInvalid, err))
	}
	if idx.APIVersion == "" {
		return nil, fail(ErrNoAPIVersion)
	}
	for name, cvs := range idx.Entries {
		kept := cvs[:0]
		for _, cv := range cvs {
			if cv == nil {
				continue
			}
			if cv.Metadata == nil {
				cv.Metadata = &chart.Metadata{}
			}
			if cv.APIVersion == "" {
				cv.APIVersion = chart.APIVersionV1
			}
			if err := cv.Validate(); err != nil && !skippable(err) {
				continue
			}
			kept = append(kept, cv)
		}
		idx.Entries[name] = sortEntries(kept)
	}
	return idx, nil
}

// skippable is the one validation error Helm ignores when it reads an
// index (helm#12748: repositories that strip the alias of dependencies).
func skippable(err error) bool {
	var verr chart.ValidationError
	return errors.As(err, &verr) && strings.HasPrefix(verr.Error(), "validation: more than one dependency with name or alias")
}

// Get returns the version of chart name that Helm's IndexFile.Get
// returns: the entry whose version is exactly revision, else the highest
// version the constraint admits ("" admits every version). The error is
// an *Error wrapping ErrNoChart or ErrNoVersion.
func (i *Index) Get(name, revision string) (*ChartVersion, error) {
	cvs, ok := i.Entries[name]
	if !ok {
		return nil, &Error{Repository: source.RedactURL(i.repo), Chart: name, Err: ErrNoChart}
	}
	versions := make([]string, len(cvs))
	for n, cv := range cvs {
		versions[n] = cv.Version
	}
	n, err := selectIndex(versions, revision)
	if err != nil {
		return nil, &Error{Repository: source.RedactURL(i.repo), Chart: name, Version: revision, Err: err}
	}
	return cvs[n], nil
}

// Exact returns the entry of chart name at exactly version.
func (i *Index) Exact(name, version string) (*ChartVersion, bool) {
	for _, cv := range i.Entries[name] {
		if cv.Version == version {
			return cv, true
		}
	}
	return nil, false
}

// ChartURL is the absolute URL of cv's archive: its first URL resolved
// against the repository's as Helm resolves it (ResolveReferenceURL).
func (i *Index) ChartURL(cv *ChartVersion) (string, error) {
	if len(cv.URLs) == 0 {
		return "", &Error{Repository: source.RedactURL(i.repo), Chart: cv.Name, Version: cv.Version, Err: fmt.Errorf("%w: the entry has no URL", ErrInvalidURL)}
	}
	u, err := ResolveReferenceURL(i.repo, cv.URLs[0])
	if err != nil {
		return "", &Error{Repository: source.RedactURL(i.repo), Chart: cv.Name, Version: cv.Version, Err: err}
	}
	return u, nil
}
