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
//   - the repository Secret of repoURL (URLs compared as Argo CD compares
//     them, see lookupForms) scoped to project (project field equal to
//     it) when there is one, else the unscoped one (no project field); a
//     Secret scoped to another project is never used;
//   - when that Secret has no credentials (Argo CD's HasCredentials: no
//     username, password, bearer token, SSH key, client certificate,
//     GitHub App key, Azure workload identity or service principal
//     secret), or there is none, the credential template (repo-creds)
//     with the longest URL prefix of repoURL among the templates scoped
//     to project and the unscoped ones (at equal length the one scoped to
//     project) fills in what the repository Secret leaves empty, as Argo
//     CD's CopyCredentialsFrom: its forceHttpBasicAuth and
//     useAzureWorkloadIdentity replace the repository's, and its enableOCI
//     and insecureOCIForceHttp add to them;
//   - the CA certificates of its host (argocd-tls-certs-cm) are added
//     and, for SSH, the known hosts;
//   - a token is minted when the Secret names no password, bearer token
//     or SSH key: a GitHub App's installation token (user
//     x-access-token), a Google Cloud access token (gcpServiceAccountKey,
//     Git repositories: user the key's client_email), an Azure token
//     (useAzureWorkloadIdentity: the bearer token of an Azure DevOps Git
//     repository, or an Azure Container Registry refresh token for a Helm
//     or OCI repository; an Azure service principal: the bearer token of
//     an Azure DevOps Git repository). Tokens are reused until 5 minutes
//     before they expire.
//
// nil when nothing applies. When a Secret that applies has a malformed
// field, or its token cannot be minted, the credentials carry the error
// in Err (sources then refuse the repository with it, never reading it
// anonymously) and LastError reports it too. Its signature fits
// engine.Options.ProjectCredentials.
func (s *Store) ForProject(project, repoURL string) *source.Credentials {
	timeout := s.opts.TokenTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*timeout)
	defer cancel()
	c, err := s.CredentialsForProject(ctx, project, repoURL)
	s.mu.Lock()
	s.lastErr = err
	s.mu.Unlock()
	return c
}

// LastError returns the error of the last For or ForProject, if any (a
// malformed field, a token that could not be minted).
func (s *Store) LastError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

// CredentialsFor is For with a context and the error:
// CredentialsForProject with project "".
func (s *Store) CredentialsFor(ctx context.Context, repoURL string) (*source.Credentials, error) {
	return s.CredentialsForProject(ctx, "", repoURL)
}

// CredentialsForProject is ForProject with a context, returning the error
// that the credentials also carry in Err.
func (s *Store) CredentialsForProject(ctx context.Context, project, repoURL string) (*source.Credentials, error) {
	return s.lookup(ctx, s.repos, s.templates, project, repoURL)
}

// WriteCredentialsForProject returns the credentials with which the source
// hydrator of an application of project pushes to repoURL: the rules of
// CredentialsForProject over the repository-write Secrets and the
// repo-write-creds templates only (Argo CD's GetWriteRepository), never
// over the repository and repo-creds Secrets, which only read. nil (and no
// error) when none applies.
func (s *Store) WriteCredentialsForProject(ctx context.Context, project, repoURL string) (*source.Credentials, error) {
	return s.lookup(ctx, s.writeRepos, s.writeTemplates, project, repoURL)
}

// WriteForProject is WriteCredentialsForProject for a host without a
// context, as ForProject is for reads: the error is in the credentials'
// Err and in LastError.
func (s *Store) WriteForProject(project, repoURL string) *source.Credentials {
	timeout := s.opts.TokenTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*timeout)
	defer cancel()
	c, err := s.WriteCredentialsForProject(ctx, project, repoURL)
	s.mu.Lock()
	s.lastErr = err
	s.mu.Unlock()
	return c
}

// lookup is CredentialsForProject over the given repository Secrets and
// templates (those that read, or those that write).
func (s *Store) lookup(ctx context.Context, repos, templates []Repository, project, repoURL string) (*source.Credentials, error) {
	forms := lookupForms(repoURL)
	var set settings
	var err error
	owner := ""
	found := false
	r := repository(repos, project, forms)
	if r != nil {
		set, err, owner, found = r.set, r.Err, r.Secret, true
	}
	if r == nil || !hasCredentials(r.set) {
		if t := template(templates, project, forms); t != nil {
			// The template's credentials are the ones minted from.
			set, owner, found = inherit(set, t.set), t.Secret, true
			if err == nil {
				err = t.Err
			}
		}
	}
	ca := s.caByHost[hostOf(repoURL)]
	if !found && len(ca) == 0 {
		return nil, nil
	}
	typ := effectiveType(set.str("type"), repoURL)
	c := buildCredentials(typ, set)
	if len(ca) > 0 {
		c.CAData = append(append([]byte{}, c.CAData...), ca...)
	}
	if len(c.SSHPrivateKey) > 0 && len(c.KnownHosts) == 0 {
		c.KnownHosts = s.knownHost
	}
	if err == nil && found {
		var m minter
		if m, err = s.minterFor(owner, typ, set, c); err == nil && m != nil {
			c.CacheIdentity = m.cacheIdentity()
			err = m.apply(ctx, repoURL, c)
		}
	}
	if err != nil {
		c.Err = err
		return c, err
	}
	return c, nil
}

// repository returns the repository Secret among repos of the first of
// forms that has one, for project: the one scoped to project, else the unscoped one, else
// nil (a Secret scoped to another project is skipped, as Argo CD skips
// it).
func repository(repos []Repository, project string, forms []string) *Repository {
	for _, form := range forms {
		var unscoped *Repository
		for i := range repos {
			r := &repos[i]
			if normalizeURL(r.URL) != form {
				continue
			}
			if r.Project == project {
				return r
			}
			if r.Project == "" && unscoped == nil {
				unscoped = r
			}
		}
		if unscoped != nil {
			return unscoped
		}
	}
	return nil
}

// template returns the credential template among templates whose URL is
// the longest prefix of one of forms among those scoped to project and the unscoped
// ones; at equal length the one scoped to project. nil when none applies.
func template(templates []Repository, project string, forms []string) *Repository {
	var best *Repository
	bestLen := -1
	for i := range templates {
		t := &templates[i]
		prefix := normalizeURL(t.URL)
		if t.Project != "" && t.Project != project {
			continue
		}
		matches := false
		for _, form := range forms {
			matches = matches || strings.HasPrefix(form, prefix)
		}
		if !matches {
			continue
		}
		if len(prefix) > bestLen || (len(prefix) == bestLen && t.Project == project && best.Project != project) {
			best, bestLen = t, len(prefix)
		}
	}
	return best
}
