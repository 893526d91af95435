package engine

import (
	"errors"

	"github.com/kubegitops/gitops/appstatus"
)

// KeepsLastGood reports whether a refresh's outcome should leave an app's
// last good status in place rather than replace it. The rules, which Run
// follows and hosts with their own loop (the operator example) can share:
//   - a refresh that made its comparison (no error, or a refusal that
//     still compared every object: st.Resources is set) replaces it;
//   - a destination cluster that is unavailable (ClusterUnavailableError)
//     replaces it with Unknown: nothing is known of the live state any
//     more;
//   - any other failure (the repository down or hung, a render error)
//     keeps its resources and health, with the sync status Unknown (the
//     comparison could not be made, as Argo CD says), the failure's
//     conditions in place of its own and the failure's time as its
//     ReconciledAt (KeptStatus), so a host shows both what was last
//     known and why it is not fresh.
func KeepsLastGood(st appstatus.Status, err error) bool {
	var unavailable *ClusterUnavailableError
	return err != nil && st.Resources == nil && !errors.As(err, &unavailable)
}

// keepLastGood applies KeepsLastGood to an app of Run: the status to
// record, from the one refresh returned and the last good one.
func (r *runner) keepLastGood(st *appState, status appstatus.Status, err error) appstatus.Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !KeepsLastGood(status, err) {
		if err == nil || status.Resources != nil {
			st.good, st.hasGood = status, true
		}
		return status
	}
	if !st.hasGood {
		return status
	}
	return KeptStatus(st.good, status)
}

// KeptStatus is the status to show after a failed refresh (failed) that
// KeepsLastGood says keeps the last good one (good): good's revision,
// resources and health, with the sync status Unknown, failed's conditions
// and failed's ReconciledAt.
func KeptStatus(good, failed appstatus.Status) appstatus.Status {
	kept := good
	kept.Sync = appstatus.Unknown
	kept.Conditions = failed.Conditions
	kept.ReconciledAt = failed.ReconciledAt
	return kept
}
