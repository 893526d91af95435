package helmrepo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/repo"
	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops/source"
)

// index returns the parsed index of an HTTP(S) chart repository, shared by
// every resolve of the repository and identity within IndexTTL.
func (s *Source) index(ctx context.Context, r source.Repository) (*repo.IndexFile, error) {
	key := "index\x00" + r.Credentials.Identity() + "\x00" + repoBase(r)
	v, err := s.indexes.get(ctx, key, func(ctx context.Context) (any, error) {
		s.indexRequests.Add(1)
		data, err := s.get(ctx, r, repoBase(r)+"/index.yaml", s.opts.MaxIndexBytes)
		if err != nil {
			return nil, err
		}
		if _, err := s.store.put(data); err != nil {
			s.opts.Logger.V(1).Info("chart cache: index not stored", "repo", source.RedactURL(r.URL), "error", err.Error())
		}
		return parseIndex(data)
	})
	if err != nil {
		return nil, err
	}
	return v.(*repo.IndexFile), nil
}

// parseIndex reads an index.yaml (YAML or JSON) as Helm does: entries
// that are empty or fail Helm's validation are dropped, versions sorted
// highest first.
func parseIndex(data []byte) (*repo.IndexFile, error) {
	idx := &repo.IndexFile{}
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: empty index.yaml", source.ErrInvalidRepository)
	}
	if err := yaml.Unmarshal(data, idx); err != nil {
		return nil, fmt.Errorf("%w: index.yaml is not a valid repository index", source.ErrInvalidRepository)
	}
	if idx.APIVersion == "" {
		return nil, fmt.Errorf("%w: index.yaml has no apiVersion", source.ErrInvalidRepository)
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
			if err := cv.Validate(); err != nil && !isSkippable(err) {
				continue
			}
			kept = append(kept, cv)
		}
		idx.Entries[name] = kept
	}
	idx.SortEntries()
	return idx, nil
}

// isSkippable mirrors Helm's tolerance of the one validation error it
// ignores when reading an index (helm#12748: repositories that strip the
// alias field of dependencies).
func isSkippable(err error) bool {
	return strings.HasPrefix(err.Error(), "validation: more than one dependency with name or alias")
}

func (s *Source) resolveHTTP(ctx context.Context, r source.Repository, revision string) (string, error) {
	idx, err := s.index(ctx, r)
	if err != nil {
		return "", err
	}
	cv, err := lookup(idx, r.Chart, revision)
	if err != nil {
		return "", err
	}
	return cv.Version, nil
}

// lookup finds a version in an index as Helm does: an exact match first,
// then the highest version the constraint admits ("" is "*").
func lookup(idx *repo.IndexFile, chartName, revision string) (*repo.ChartVersion, error) {
	cv, err := idx.Get(chartName, revision)
	switch {
	case errors.Is(err, repo.ErrNoChartName):
		return nil, fmt.Errorf("%w: no chart %q in the repository", ErrChartNotFound, chartName)
	case err != nil:
		return nil, fmt.Errorf("%w: no version of %q matches %q", source.ErrRevisionNotFound, chartName, revision)
	}
	return cv, nil
}

func (s *Source) downloadHTTP(ctx context.Context, r source.Repository, version string) ([]byte, error) {
	idx, err := s.index(ctx, r)
	if err != nil {
		return nil, err
	}
	cv, ok := exact(idx, r.Chart, version)
	if !ok {
		// A version published after the index we hold: look once more.
		s.indexes.drop("index\x00" + r.Credentials.Identity() + "\x00" + repoBase(r))
		if idx, err = s.index(ctx, r); err != nil {
			return nil, err
		}
		if cv, ok = exact(idx, r.Chart, version); !ok {
			return nil, fmt.Errorf("%w: %s %s is not in the repository index", source.ErrRevisionNotFound, r.Chart, version)
		}
	}
	if len(cv.URLs) == 0 {
		return nil, fmt.Errorf("%w: index entry %s %s has no URL", source.ErrInvalidRepository, r.Chart, version)
	}
	u, err := repo.ResolveReferenceURL(repoBase(r)+"/", cv.URLs[0])
	if err != nil {
		return nil, fmt.Errorf("%w: index entry %s %s has an invalid URL", source.ErrInvalidRepository, r.Chart, version)
	}
	s.downloads.Add(1)
	data, err := s.get(ctx, r, u, s.opts.MaxArchiveBytes)
	if err != nil {
		return nil, err
	}
	if cv.Digest != "" && !strings.EqualFold(strings.TrimPrefix(cv.Digest, "sha256:"), digestOf(data)) {
		return nil, fmt.Errorf("%w: %s %s", ErrDigestMismatch, r.Chart, version)
	}
	return data, nil
}

func exact(idx *repo.IndexFile, name, version string) (*repo.ChartVersion, bool) {
	for _, cv := range idx.Entries[name] {
		if cv.Version == version {
			return cv, true
		}
	}
	return nil, false
}

// get fetches target with the repository's credentials (sent only where
// Credentials.AppliesTo allows), at most max bytes. Errors name nothing
// secret.
func (s *Source) get(ctx context.Context, r source.Repository, target string, max int64) ([]byte, error) {
	c, err := s.clientsFor(r)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: unparsable URL", source.ErrInvalidRepository)
	}
	if err := s.opts.Policy.CheckURL(req.URL); err != nil {
		return nil, err
	}
	if req.URL.User != nil {
		// Credentials written into the URL are credentials of that URL.
		pw, _ := req.URL.User.Password()
		req.SetBasicAuth(req.URL.User.Username(), pw)
		req.URL.User = nil
	} else if cr := r.Credentials; cr != nil && cr.AppliesTo(r.URL, target) {
		switch {
		case cr.BearerToken != "":
			req.Header.Set("Authorization", "Bearer "+cr.BearerToken)
		case cr.Username != "" || cr.Password != "":
			req.SetBasicAuth(cr.Username, cr.Password)
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, classify(err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("%w: status %d", source.ErrAuthentication, resp.StatusCode)
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("%w: status 404", source.ErrRepositoryNotFound)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("%w: status %d", source.ErrUnavailable, resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, classify(err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrArchiveTooLarge, max)
	}
	return data, nil
}
