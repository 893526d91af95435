package engine

import (
	"reflect"
	"slices"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/source"
)

// The live-set API: what an add-on running beside Run (the ApplicationSet
// controller of package appset/controller, an image updater) needs to
// read and change the apps Run reconciles without reaching into it. Apps
// are named by their v1alpha1.AppKey; the engine maps a key to its own
// instance name (the tracking id) itself.

// Running reports whether Run is running: the calls that change the live
// set (Upsert, CompareAndUpsert, Remove) return ErrNotRunning otherwise.
func (apps Apps) Running() bool {
	e := apps.e

	return e.running() != nil
}

// Options returns the options the engine was built with, with New's
// defaults filled in and the fields Reconfigure takes as it last took
// them. Clusters is as New got it (SetClusters does not change it) and is
// a copy; the seams (functions, interfaces) are shared.
func (set Settings) Options() Options {
	e := set.e

	o := e.opts
	takeLive(&o, e.parts().opts)
	o.Clusters = slices.Clone(o.Clusters)
	return o
}

// Source returns the Source the engine reads repoURL with: Options.SourceFor's
// choice, or the engine's own Git (or folder) source, one per kind for the
// engine's life, so that a reader sharing it shares its object store and
// resolve cache (and Invalidate and Hint reach it). Credentials are not
// applied: pass Options().Credentials(repoURL) in the source.Repository.
func (srcs Sources) Source(repoURL string) (source.Source, error) {
	e := srcs.e

	return e.sourceFor(repoURL)
}

// ManagedApp returns a copy of the Application Run holds under key now
// (given to Run, upserted, or rendered by a parent app), whichever replica
// owns it (see Owns); false when Run holds none or is not running. A
// writer that computes its change from it passes it to CompareAndUpsert
// as expected.
func (apps Apps) ManagedApp(key v1alpha1.AppKey) (Application, bool) {
	e := apps.e

	r := e.running()
	if r == nil {
		return Application{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	st, ok := r.apps[e.instanceName(key)]
	if !ok || st.app == nil {
		return Application{}, false
	}
	return *st.app.DeepCopy(), true
}

// CompareAndUpsert is Upsert for a writer that computed app from what Run
// held (ManagedApp): it replaces the app of app's key only while Run
// still holds an app equal to expected (nil: while Run holds none of that
// key), so a change another writer made in between is never lost. It
// reports whether it wrote; false with a nil error means the app changed
// since expected was read (read it again and retry). Like Upsert it
// validates app (an *InvalidApplicationError) and needs Run
// (ErrNotRunning).
func (apps Apps) CompareAndUpsert(expected *Application, app Application) (bool, error) {
	e := apps.e

	if err := validateApp(&app); err != nil {
		return false, err
	}
	r := e.running()
	if r == nil {
		return false, ErrNotRunning
	}
	a := app
	r.mu.Lock()
	defer r.mu.Unlock()
	st, held := r.apps[e.instanceOf(&a)]
	switch {
	case expected == nil && held:
		return false, nil
	case expected != nil && (!held || !reflect.DeepEqual(st.app, expected)):
		return false, nil
	}
	r.addLocked(&a, "")
	return true, nil
}

// Owns reports whether this replica reconciles the app of key: Run holds
// it and, with Options.Sharder, the Sharder gives this replica the app (or
// the top-level app that renders it). Without a Sharder every app Run
// holds is owned. False when Run is not running.
func (apps Apps) Owns(key v1alpha1.AppKey) bool {
	e := apps.e

	r := e.running()
	if r == nil {
		return false
	}
	name := e.instanceName(key)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.apps[name]; !ok {
		return false
	}
	return r.ownsLocked(name)
}
