package engine

import "github.com/kubegitops/gitops/source"

// add registers fn, with e.mu held, and returns its id.
func (s *subscribers[F]) add(fn F) uint64 {
	if s.fns == nil {
		s.fns = map[uint64]F{}
	}
	id := s.next
	s.next++
	s.fns[id] = fn
	return id
}

// snapshot returns the registered functions, with e.mu held.
func (s *subscribers[F]) snapshot() []F {
	fns := make([]F, 0, len(s.fns))
	for _, fn := range s.fns {
		fns = append(fns, fn)
	}
	return fns
}

// subscribe registers fn in the set s picks under e.mu and returns the
// function that removes it (again: nothing).
func subscribe[F any](e *Engine, s func(*Engine) *subscribers[F], fn F) (stop func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	id := s(e).add(fn)
	return func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		delete(s(e).fns, id)
	}
}

// subscribed returns the functions of the set s picks, read under e.mu,
// for the caller to call outside it.
func subscribed[F any](e *Engine, s func(*Engine) *subscribers[F]) []F {
	e.mu.Lock()
	defer e.mu.Unlock()
	return s(e).snapshot()
}

func hintSet(e *Engine) *hintSubscribers { return &e.hints }

// OnHint registers notify to be called with the repository URL of every
// Engine.Apps().Hint, as given to Hint (compare with source.RepositoryKey to
// ignore URL spelling), before Hint queues the apps that use it. An add-on
// that reads repositories itself (the ApplicationSet controller's git
// generators) subscribes so that a push reaches it too. notify runs on
// Hint's goroutine: it must not block (signal a buffered channel). The
// returned stop unsubscribes; calling it again does nothing. Subscriptions
// do not need Run.
func (apps Apps) OnHint(notify func(repoURL string)) (stop func()) {
	e := apps.e

	return subscribe(e, hintSet, notify)
}

// notifyHint calls the OnHint subscribers with repoURL, outside e.mu.
func (e *Engine) notifyHint(repoURL string) {
	for _, fn := range subscribed(e, hintSet) {
		fn(repoURL)
	}
}

// Hint asks a running engine to refresh at once every app that uses the
// repository (a webhook or poller saw a push), and tells the OnHint
// subscribers (the ApplicationSet controller generates at once the sets
// whose git generators read it). Matching ignores URL spelling (scheme,
// user, .git suffix).
func (apps Apps) Hint(repoURL string) {
	e := apps.e

	e.notifyHint(repoURL)
	e.mu.Lock()
	r := e.runner
	e.mu.Unlock()
	if r == nil {
		return
	}
	key := source.RepositoryKey(repoURL)
	r.mu.Lock()
	var names []string
	urls := map[string]bool{} // the spellings of the repository apps use
	for name, st := range r.apps {
		for _, src := range st.app.Spec.AllSources() {
			if source.RepositoryKey(src.RepoURL) == key {
				names = append(names, name)
				urls[src.RepoURL] = true
				break
			}
		}
	}
	r.mu.Unlock()
	// Once per spelling, not once per app: a monorepo of 10,000 apps is
	// one invalidation.
	for u := range urls {
		e.Apps().Invalidate(u)
	}
	for _, n := range names {
		r.queue.Add(n)
	}
}

// Invalidate forgets what the engine knows of a repository's branches and
// tags, so that the next refresh of its apps resolves them again (Argo
// CD's hard refresh; rendered manifests stay cached, by content). Hint
// does this for a running engine and also queues the apps.
func (apps Apps) Invalidate(repoURL string) {
	e := apps.e

	// The same URL may be a chart repository: its index is read again too.
	e.sources.Invalidate(repoURL)
}
