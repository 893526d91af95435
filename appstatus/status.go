package appstatus

import (
	"time"

	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/resource"
)

// SyncStatusCode says whether live state matches Git.
type SyncStatusCode string

// Sync status codes, Argo CD's.
const (
	Synced    SyncStatusCode = "Synced"
	OutOfSync SyncStatusCode = "OutOfSync"
	Unknown   SyncStatusCode = "Unknown"
)

// Status is the outcome of a refresh as the engine reports it: how the
// application compares with Git and how healthy it is (Refreshed turns it
// into Argo CD's ApplicationStatus).
type Status struct {
	// Sync is Synced when every object matches, OutOfSync when any differs
	// or needs pruning, Unknown when the comparison could not be made.
	Sync SyncStatusCode `json:"sync"`
	// Health is the application's aggregated health.
	Health health.Status `json:"health"`
	// Revision is the commit compared (commas between sources).
	Revision string `json:"revision,omitempty"`
	// Resources has a row per desired or managed object.
	Resources []ResourceRow `json:"resources,omitempty"`
	// Conditions are errors and warnings.
	Conditions []Condition `json:"conditions,omitempty"`
	// ReconciledAt is when the refresh finished.
	ReconciledAt time.Time `json:"reconciledAt"`
}

// ResourceRow is one object's row of a Status (gitops.ResourceStatus, its
// old name in the root, is deprecated; this package's ResourceStatus is
// Argo CD's).
type ResourceRow struct {
	// Key names the object.
	Key resource.Key `json:"key"`
	// Status is the object's sync status: Synced, OutOfSync or Unknown.
	Status SyncStatusCode `json:"status"`
	// Health is the object's health; nil for a kind whose health is not
	// judged.
	Health *health.Status `json:"health,omitempty"`
	// Hook reports a hook, which never counts toward sync or health.
	Hook bool `json:"hook,omitempty"`
	// RequiresPruning reports a live object of the app no longer in Git.
	RequiresPruning bool `json:"requiresPruning,omitempty"`
	// PruneDisabled reports an object that requires pruning but whose
	// sync-options say Prune=false or Prune=confirm: a sync keeps it (the
	// first always, the second until a person confirms).
	PruneDisabled bool `json:"pruneDisabled,omitempty"`
	// Diff is the masked unified diff of an out-of-sync object.
	Diff string `json:"diff,omitempty"`
}

// HistoryEntry records one successful sync.
type HistoryEntry struct {
	// ID numbers the entries of an app from 1.
	ID int64 `json:"id"`
	// Revisions are the synced commits, one per source.
	Revisions []string `json:"revisions"`
	// DeployedAt is when the sync finished.
	DeployedAt time.Time `json:"deployedAt"`
}
