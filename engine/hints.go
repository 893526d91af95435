package engine

// hintSubscribers are the functions OnHint registered, by id.
type hintSubscribers struct {
	next uint64
	fns  map[uint64]func(repoURL string)
}

// OnHint registers notify to be called with the repository URL of every
// Engine.Hint, as given to Hint (compare with source.RepositoryKey to
// ignore URL spelling), before Hint queues the apps that use it. An add-on
// that reads repositories itself (the ApplicationSet controller's git
// generators) subscribes so that a push reaches it too. notify runs on
// Hint's goroutine: it must not block (signal a buffered channel). The
// returned stop unsubscribes; calling it again does nothing. Subscriptions
// do not need Run.
func (e *Engine) OnHint(notify func(repoURL string)) (stop func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.hints.fns == nil {
		e.hints.fns = map[uint64]func(string){}
	}
	id := e.hints.next
	e.hints.next++
	e.hints.fns[id] = notify
	return func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		delete(e.hints.fns, id)
	}
}

// notifyHint calls the OnHint subscribers with repoURL, outside e.mu.
func (e *Engine) notifyHint(repoURL string) {
	e.mu.Lock()
	fns := make([]func(string), 0, len(e.hints.fns))
	for _, fn := range e.hints.fns {
		fns = append(fns, fn)
	}
	e.mu.Unlock()
	for _, fn := range fns {
		fn(repoURL)
	}
}
