package engine

import "github.com/kubegitops/gitops/autosync"

// SelfHealTimeout is the least time between two self-heal syncs of one
// app at one revision, and the first step of the self-heal backoff.
//
// Deprecated: use autosync.SelfHealTimeout.
const SelfHealTimeout = autosync.SelfHealTimeout

// MaxSelfHealBackoff caps the wait between self-heal syncs of one revision.
//
// Deprecated: use autosync.MaxSelfHealBackoff.
const MaxSelfHealBackoff = autosync.MaxSelfHealBackoff

// The automated-sync decision lives in package autosync, a pure function
// below the engine; these aliases keep the old names for one release.
type (
	// AutoSyncRecord is what the decision remembers of the last
	// automated sync of an app.
	//
	// Deprecated: use autosync.Record.
	AutoSyncRecord = autosync.Record
	// AutoSyncInput is what the decision looks at.
	//
	// Deprecated: use autosync.Input.
	AutoSyncInput = autosync.Input
	// AutoSyncDecision is the outcome of DecideAutoSync.
	//
	// Deprecated: use autosync.Decision.
	AutoSyncDecision = autosync.Decision
)

// DecideAutoSync decides whether an app with automated sync is synced now,
// after a refresh, by the rules autosync.Decide lists.
//
// Deprecated: use autosync.Decide.
func DecideAutoSync(in AutoSyncInput) AutoSyncDecision { return autosync.Decide(in) }
