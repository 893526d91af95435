package engine

// subscribers are the functions an On* method registered, by id. Each set
// is guarded by Engine.mu; calls are made outside it (snapshot).
type subscribers[F any] struct {
	next uint64
	fns  map[uint64]F
}

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

// hintSubscribers are the functions OnHint registered.
type hintSubscribers = subscribers[func(repoURL string)]

func hintSet(e *Engine) *hintSubscribers { return &e.hints }

// OnHint registers notify to be called with the repository URL of every
// Engine.Hint, as given to Hint (compare with source.RepositoryKey to
// ignore URL spelling), before Hint queues the apps that use it. An add-on
// that reads repositories itself (the ApplicationSet controller's git
// generators) subscribes so that a push reaches it too. notify runs on
// Hint's goroutine: it must not block (signal a buffered channel). The
// returned stop unsubscribes; calling it again does nothing. Subscriptions
// do not need Run.
func (e *Engine) OnHint(notify func(repoURL string)) (stop func()) {
	return subscribe(e, hintSet, notify)
}

// notifyHint calls the OnHint subscribers with repoURL, outside e.mu.
func (e *Engine) notifyHint(repoURL string) {
	for _, fn := range subscribed(e, hintSet) {
		fn(repoURL)
	}
}
