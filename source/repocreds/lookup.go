package repocreds

import (
	"context"
	"strings"
	"time"

	"github.com/kubegitops/gitops/source"
)

// For returns the credentials of repoURL for a fetch made for no
// project: ForProject with project "". A Secret scoped to a project (its
// project field) never serves it. Its signature fits
// engine.Options.Credentials.
func (s *Store) For(repoURL string) *source.Credentials { return s.ForProject("", repoURL) }

// ForProject returns the credentials with which an application of project
// (its spec.project) reads repoURL, as Argo CD picks them:
//
//   - the repository Secret of repoURL scoped to project (project field
//     equal to it) when there is one, else the unscoped one (no project
//     field); a Secret scoped to another project is never used;
//   - when that Secret has no credentials, or there is none, those of the
//     credential template (repo-creds) with the longest URL prefix of
//     repoURL among the templates scoped to project and the unscoped ones;
//     at equal length the one scoped to project wins;
//   - then the CA certificates of its host (argocd-tls-certs-cm) and, for
//     SSH, the known hosts are added.
//
// nil when nothing applies. Its signature fits
// engine.Options.ProjectCredentials.
//
// A GitHub App's installation token is minted (or reused) on the way; when
// that fails ForProject returns nil (the repository is then read
// anonymously and refuses) and LastError reports why.
// CredentialsForProject returns the error.
func (s *Store) ForProject(project, repoURL string) *source.Credentials {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := s.CredentialsForProject(ctx, project, repoURL)
	s.mu.Lock()
	s.lastErr = err
	s.mu.Unlock()
	if err != nil {
		return nil
	}
	return c
}

// LastError returns the error of the last For or ForProject, if any (a
// GitHub App token that could not be minted).
func (s *Store) LastError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

// CredentialsFor is For with a context and the error of minting a GitHub
// App token: CredentialsForProject with project "".
func (s *Store) CredentialsFor(ctx context.Context, repoURL string) (*source.Credentials, error) {
	return s.CredentialsForProject(ctx, "", repoURL)
}

// CredentialsForProject is ForProject with a context and the error of
// minting a GitHub App token.
func (s *Store) CredentialsForProject(ctx context.Context, project, repoURL string) (*source.Credentials, error) {
	key := normalise(repoURL)
	var c *source.Credentials
	var app *GitHubApp
	if r := s.repository(project, key); r != nil && r.Credentials != nil {
		cp := *r.Credentials
		c = &cp
		app = r.GitHubApp
	}
	if (c == nil || c.Kind() == "none") && app == nil {
		if t := s.template(project, key); t != nil {
			app = t.GitHubApp
			cp := *t.Credentials
			if own := c; own != nil {
				// The repository's own settings stay: enableOCI,
				// insecureOCIForceHttp, and its proxy unless the
				// template has one.
				cp.EnableOCI = cp.EnableOCI || own.EnableOCI
				cp.InsecureOCIForceHTTP = cp.InsecureOCIForceHTTP || own.InsecureOCIForceHTTP
				if cp.Proxy == "" {
					cp.Proxy, cp.NoProxy = own.Proxy, own.NoProxy
				}
			}
			c = &cp
		}
	}
	if ca := s.caByHost[hostOf(repoURL)]; len(ca) > 0 {
		if c == nil {
			c = &source.Credentials{}
		}
		c.CAData = append(append([]byte{}, c.CAData...), ca...)
	}
	if c != nil && len(c.SSHPrivateKey) > 0 && len(c.KnownHosts) == 0 {
		c.KnownHosts = s.knownHost
	}
	if app != nil {
		token, err := app.Token(ctx)
		if err != nil {
			return nil, err
		}
		c.Username, c.Password = "x-access-token", token
	}
	return c, nil
}

// repository returns the repository Secret of the normalised URL key for
// project: the one scoped to project, else the unscoped one, else nil (a
// Secret scoped to another project is skipped, as Argo CD skips it).
func (s *Store) repository(project, key string) *Repository {
	var unscoped *Repository
	for i := range s.repos {
		r := &s.repos[i]
		if normalise(r.URL) != key {
			continue
		}
		if r.Project == project {
			return r
		}
		if r.Project == "" && unscoped == nil {
			unscoped = r
		}
	}
	return unscoped
}

// template returns the credential template with credentials whose URL is
// the longest prefix of the normalised URL key among those scoped to
// project and the unscoped ones; at equal length the one scoped to
// project. nil when none applies.
func (s *Store) template(project, key string) *Repository {
	var best *Repository
	bestLen := -1
	for i := range s.templates {
		t := &s.templates[i]
		prefix := normalise(t.URL)
		if t.Credentials == nil || !strings.HasPrefix(key, prefix) || (t.Project != "" && t.Project != project) {
			continue
		}
		// Templates are sorted longest prefix first: the first of a
		// length wins unless a later one of that length is the
		// project's own.
		if len(prefix) > bestLen || (len(prefix) == bestLen && t.Project == project && best.Project != project) {
			best, bestLen = t, len(prefix)
		}
	}
	return best
}
