package repocreds

import (
	"sync/atomic"

	"github.com/kubegitops/gitops/source"
)

// Live is a Store that a host replaces while the engine runs, for example
// each time a repository Secret is created, changed or deleted: For always
// answers from the Store set last. The zero value has no credentials. It
// is safe for concurrent use.
type Live struct {
	s atomic.Pointer[Store]
}

// Set makes s the Store every later For answers from (nil: none).
func (l *Live) Set(s *Store) { l.s.Store(s) }

// Store returns the Store set last, or nil.
func (l *Live) Store() *Store { return l.s.Load() }

// For returns the credentials of repoURL for a fetch made for no project
// in the Store set last (see Store.For), nil when none is set. Its
// signature fits engine.Options.Credentials.
func (l *Live) For(repoURL string) *source.Credentials { return l.ForProject("", repoURL) }

// ForProject returns the credentials with which an application of project
// reads repoURL in the Store set last (see Store.ForProject), nil when
// none is set. Its signature fits engine.Options.ProjectCredentials.
func (l *Live) ForProject(project, repoURL string) *source.Credentials {
	s := l.s.Load()
	if s == nil {
		return nil
	}
	return s.ForProject(project, repoURL)
}

// WriteForProject returns the credentials with which the source hydrator
// of an application of project pushes to repoURL, from the Store set last
// (see Store.WriteForProject: repository-write and repo-write-creds
// Secrets only), nil when none is set or none applies.
func (l *Live) WriteForProject(project, repoURL string) *source.Credentials {
	s := l.s.Load()
	if s == nil {
		return nil
	}
	return s.WriteForProject(project, repoURL)
}
