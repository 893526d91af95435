package helmrepo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/kubegitops/gitops/internal/helmindex"
	"github.com/kubegitops/gitops/source"
)

// index returns the parsed index of an HTTP(S) chart repository, shared by
// every resolve of the repository and identity within IndexTTL.
func (s *Source) index(ctx context.Context, r source.Repository) (*helmindex.Index, error) {
	key := "index\x00" + r.Credentials.Identity() + "\x00" + repoBase(r)
	v, err := s.indexes.get(ctx, key, func(ctx context.Context) (any, error) {
		s.indexRequests.Add(1)
		u, err := helmindex.IndexURL(r.URL)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", source.ErrInvalidRepository, err)
		}
		data, err := s.get(ctx, r, u, s.opts.MaxIndexBytes)
		if err != nil {
			return nil, err
		}
		if _, err := s.store.put(data); err != nil {
			s.opts.Logger.V(1).Info("chart cache: index not stored", "repo", source.RedactURL(r.URL), "error", err.Error())
		}
		idx, err := helmindex.Parse(r.URL, data, s.opts.MaxIndexBytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", source.ErrInvalidRepository, err)
		}
		return idx, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*helmindex.Index), nil
}

func (s *Source) resolveHTTP(ctx context.Context, r source.Repository, revision string) (string, error) {
	idx, err := s.index(ctx, r)
	if err != nil {
		return "", err
	}
	cv, err := idx.Get(r.Chart, revision)
	switch {
	case errors.Is(err, helmindex.ErrNoChart):
		return "", fmt.Errorf("%w: %w", ErrChartNotFound, err)
	case err != nil:
		return "", fmt.Errorf("%w: %w", source.ErrRevisionNotFound, err)
	}
	return cv.Version, nil
}

func (s *Source) downloadHTTP(ctx context.Context, r source.Repository, version string) ([]byte, error) {
	idx, err := s.index(ctx, r)
	if err != nil {
		return nil, err
	}
	cv, ok := idx.Exact(r.Chart, version)
	if !ok {
		// A version published after the index we hold: look once more.
		s.indexes.drop("index\x00" + r.Credentials.Identity() + "\x00" + repoBase(r))
		if idx, err = s.index(ctx, r); err != nil {
			return nil, err
		}
		if cv, ok = idx.Exact(r.Chart, version); !ok {
			return nil, fmt.Errorf("%w: %s %s is not in the repository index", source.ErrRevisionNotFound, r.Chart, version)
		}
	}
	u, err := idx.ChartURL(cv)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", source.ErrInvalidRepository, err)
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
		switch httpAuth(cr) {
		case "bearer":
			req.Header.Set("Authorization", "Bearer "+cr.BearerToken)
		case "basic":
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
