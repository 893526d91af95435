package v1alpha1

// The sync policy of an Application: automated sync, retries and the
// managed namespace.

// SyncPolicy says when and how an application syncs.
type SyncPolicy struct {
	// Automated syncs the app when Git and the live state differ; without it
	// syncs run only when asked.
	Automated *SyncPolicyAutomated `json:"automated,omitempty"`
	// SyncOptions are Key=Value sync options (CreateNamespace=true,
	// ServerSideApply=true, PruneLast=true, ...); an option the engine does
	// not know is refused rather than ignored.
	SyncOptions []string `json:"syncOptions,omitempty"`
	// Retry retries a failed sync; without it a failed sync is not retried.
	Retry *RetryStrategy `json:"retry,omitempty"`
	// ManagedNamespaceMetadata labels and annotates the namespace that
	// CreateNamespace=true creates.
	ManagedNamespaceMetadata *ManagedNamespaceMetadata `json:"managedNamespaceMetadata,omitempty"`
}

// SyncPolicyAutomated turns on automated sync.
type SyncPolicyAutomated struct {
	// Prune deletes objects no longer in Git during automated syncs.
	Prune bool `json:"prune,omitempty"`
	// SelfHeal syncs again when the live state drifts without a new commit.
	SelfHeal bool `json:"selfHeal,omitempty"`
	// AllowEmpty lets an automated sync prune every object when Git holds
	// none.
	AllowEmpty bool `json:"allowEmpty,omitempty"`
	// Enabled, when set to false, turns automation off while keeping the
	// settings (Argo CD 3).
	Enabled *bool `json:"enabled,omitempty"`
}

// RetryStrategy retries failed syncs.
type RetryStrategy struct {
	// Limit is the number of retries; negative retries forever.
	Limit int64 `json:"limit,omitempty"`
	// Backoff is the wait between retries. Default: 5s, doubled after each
	// retry, at most 3m.
	Backoff *Backoff `json:"backoff,omitempty"`
	// Refresh makes each retry sync the latest revision of the app's
	// sources (each targetRevision resolved and rendered again, a pinned
	// revision of the operation dropped) instead of the revision the
	// operation started with (Argo CD's retry.refresh). Default false.
	Refresh bool `json:"refresh,omitempty"`
}

// Backoff is the wait between retries: Duration, multiplied by Factor after
// each, at most MaxDuration. Durations are Go durations ("5s", "3m").
type Backoff struct {
	// Duration is the wait before the first retry, a Go duration ("5s") or a
	// number of seconds. Default 5s.
	Duration string `json:"duration,omitempty"`
	// Factor multiplies the wait after each retry; at least 1. Default 2.
	Factor *int64 `json:"factor,omitempty"`
	// MaxDuration caps the wait, a Go duration or a number of seconds. Default
	// 3m.
	MaxDuration string `json:"maxDuration,omitempty"`
}

// ManagedNamespaceMetadata are the labels and annotations of the namespace
// that CreateNamespace=true creates, kept in step on every sync (as Argo
// CD: without CreateNamespace=true they have no effect).
type ManagedNamespaceMetadata struct {
	// Labels are set on the namespace.
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are set on the namespace.
	Annotations map[string]string `json:"annotations,omitempty"`
}
