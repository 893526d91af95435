package gitops

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// InvalidApplicationError reports an Application given in Go (not loaded
// from YAML) that fails the loader's validation.
type InvalidApplicationError struct {
	// App is the application's name.
	App string
	// Fields are the failures, "path: what".
	Fields []string
}

// Error implements error.
func (e *InvalidApplicationError) Error() string {
	return fmt.Sprintf("application %q is invalid: %s", e.App, strings.Join(e.Fields, "; "))
}

// ErrNotRunning is returned by Upsert and Remove when Run is not running.
var ErrNotRunning = errors.New("gitops: Run is not running")

// Upsert adds an app to the set Run reconciles, or replaces the spec of
// the app of that name, while Run runs: the app is refreshed (and synced,
// by its policy) at once, without a restart. The app is validated as
// LoadApplications would.
func (e *Engine) Upsert(app Application) error {
	if err := app.Validate(); err != nil {
		ie := &InvalidApplicationError{App: app.Name}
		var ve *v1alpha1.ValidationError
		if errors.As(err, &ve) {
			for _, fe := range ve.Fields {
				ie.Fields = append(ie.Fields, fe.Error())
			}
		}
		return ie
	}
	r := e.running()
	if r == nil {
		return ErrNotRunning
	}
	a := app
	r.add(&a, "")
	return nil
}

// Remove takes an app (and the child apps it rendered) out of the set Run
// reconciles: it is no longer refreshed, synced or healed. Its objects
// stay in the cluster; call Delete for a cascading deletion. Removing an
// app Run does not manage is not an error.
func (e *Engine) Remove(name string) error {
	r := e.running()
	if r == nil {
		return ErrNotRunning
	}
	r.remove(name)
	return nil
}

func (e *Engine) running() *runner {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.runner
}

// remove forgets an app and its children; a reconcile of it in flight
// finds it gone and stops.
func (r *runner) remove(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	gone := map[string]bool{name: true}
	for changed := true; changed; {
		changed = false
		for n, st := range r.apps {
			if !gone[n] && gone[st.parent] {
				gone[n], changed = true, true
			}
		}
	}
	for n := range gone {
		delete(r.apps, n)
		r.queue.Forget(n)
	}
}
