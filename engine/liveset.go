package engine

import (
	"errors"
	"fmt"
	"sort"
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
func (apps Apps) Upsert(app Application) error {
	e := apps.e

	if err := validateApp(&app); err != nil {
		return err
	}
	r := e.running()
	if r == nil {
		return ErrNotRunning
	}
	a := app
	r.add(&a, "")
	return nil
}

// Remove takes the app of key (and the child apps it rendered) out of the
// set Run reconciles: it is no longer refreshed, synced or healed. Its
// objects stay in the cluster; call Delete for a cascading deletion.
// Removing an app Run does not manage is not an error.
func (apps Apps) Remove(key v1alpha1.AppKey) error {
	e := apps.e

	r := e.running()
	if r == nil {
		return ErrNotRunning
	}
	r.remove(e.instanceName(key))
	return nil
}

// OwnedApps returns the specs Run reconciles now of the top-level apps
// this replica owns (all of them without a Sharder), sorted by the
// engine's name of them (its tracking id):
// what Upsert and Run were given last, changes made through Upsert
// included. Child apps (rendered by an app of apps) are left out: their
// spec belongs to their parent's manifests. Nil when Run is not running.
// The specs are copies, the caller's to change.
func (apps Apps) OwnedApps() []Application {
	e := apps.e

	r := e.running()
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	keys := make([]string, 0, len(r.apps))
	for k, st := range r.apps {
		if st.app != nil && st.parent == "" && r.ownsLocked(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := make([]Application, len(keys))
	for i, k := range keys {
		out[i] = *r.apps[k].app.DeepCopy()
	}
	return out
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
		delete(r.parents, n)
		r.queue.Forget(n)
	}
}

// validateApp is Upsert's check: an *InvalidApplicationError naming the
// fields that fail Application.Validate.
func validateApp(app *Application) error {
	err := app.Validate()
	if err == nil {
		return nil
	}
	ie := &InvalidApplicationError{App: app.Name}
	var ve *v1alpha1.ValidationError
	if errors.As(err, &ve) {
		for _, fe := range ve.Fields {
			ie.Fields = append(ie.Fields, fe.Error())
		}
	}
	return ie
}
