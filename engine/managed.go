package engine

import (
	"slices"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
)

// What Run manages, as the host reads it: each app's last status and the
// apps this replica owns.

// AppStatus returns the last status Run recorded for the app of key.
func (apps Apps) AppStatus(key v1alpha1.AppKey) (appstatus.Status, bool) {
	e := apps.e

	name := e.instanceName(key)
	e.mu.Lock()
	r := e.runner
	e.mu.Unlock()
	if r == nil {
		return appstatus.Status{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	st, ok := r.apps[name]
	if !ok || !st.hasState || !r.ownsLocked(name) {
		return appstatus.Status{}, false
	}
	return st.status, true
}

// ManagedApps returns the keys of the apps Run manages, children included
// (with a Sharder, only those this replica owns), sorted by namespace and
// name.
func (apps Apps) ManagedApps() []v1alpha1.AppKey {
	e := apps.e

	e.mu.Lock()
	r := e.runner
	e.mu.Unlock()
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]v1alpha1.AppKey, 0, len(r.apps))
	for n, st := range r.apps {
		if st.app != nil && r.ownsLocked(n) {
			out = append(out, v1alpha1.KeyOf(st.app))
		}
	}
	slices.SortFunc(out, v1alpha1.AppKey.Compare)
	return out
}
