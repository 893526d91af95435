package gitops

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"time"
)

// SelfHealTimeout is the least time between two self-heal syncs of one
// app at one revision, and the first step of the self-heal backoff.
const SelfHealTimeout = 5 * time.Second

// MaxSelfHealBackoff caps the wait between self-heal syncs of one revision.
const MaxSelfHealBackoff = 5 * time.Minute

// selfHealFactor multiplies the wait after each self-heal of a revision.
const selfHealFactor = 3

// AutoSyncRecord is what the automated-sync decision remembers of the last
// automated sync of an app. A host keeps one per app (the run loop in
// memory, the operator in the Application's status) and updates it with
// Next after every decision to sync.
type AutoSyncRecord struct {
	// Revision is the revision the last automated sync was for.
	Revision string `json:"revision"`
	// Failed reports that sync did not succeed.
	Failed bool `json:"failed,omitempty"`
	// At is when it started.
	At time.Time `json:"at"`
	// Heals counts the self-heal syncs of Revision in a row; the backoff
	// grows with it.
	Heals int `json:"heals,omitempty"`
	// Drift fingerprints the out-of-sync state the last sync was run to
	// fix (DriftOf); empty once the app was seen Synced.
	Drift string `json:"drift,omitempty"`
}

// Seen updates the record with a refresh's outcome: an app seen Synced has
// no drift left, so the next difference is new and may be healed.
func (r *AutoSyncRecord) Seen(st Status) {
	if st.Sync == Synced {
		r.Drift = ""
	}
}

// AutoSyncInput is what the automated-sync decision looks at.
type AutoSyncInput struct {
	// Policy is the app's sync policy.
	Policy *SyncPolicy
	// Status is the refresh just made.
	Status Status
	// Last is the record of the app's last automated sync; nil when none.
	Last *AutoSyncRecord
	// Now is the time of the decision.
	Now time.Time
	// SelfHealTimeout is the first self-heal wait; 0 means SelfHealTimeout.
	SelfHealTimeout time.Duration
}

// AutoSyncDecision is the outcome of DecideAutoSync.
type AutoSyncDecision struct {
	// Sync reports that an automated sync should run now.
	Sync bool
	// SelfHeal reports that the sync is a self-heal: the same revision as
	// the last automated sync, run again because the live state drifted.
	SelfHeal bool
	// Wait, when Sync is false, is how long until the decision may change
	// by time alone (a self-heal backoff); 0 means only a new refresh
	// outcome can change it.
	Wait time.Duration
	// Reason says why no sync runs (for logs and status).
	Reason string
	// Next is the record to keep when the sync runs (Failed is the
	// caller's to set once it knows).
	Next AutoSyncRecord
}

// DecideAutoSync decides whether an app with automated sync is synced now,
// after a refresh. Its rules, which the run loop and the operator share:
//   - no automated policy, or automated.enabled false: no sync;
//   - the app is not OutOfSync, or the refresh carries an error condition:
//     no sync;
//   - every out-of-sync object is one that only needs pruning while a sync
//     would not prune it (automated prune is off, or the live object says
//     Prune=false or Prune=confirm): no sync, since it would change nothing
//     (Argo CD: "need to prune extra resources only");
//   - a revision other than the last automated sync's: sync;
//   - the same revision after a failed sync: no sync (the retry policy
//     already retried; only a new revision is synced again);
//   - the same revision without selfHeal: no sync;
//   - the same revision with selfHeal (a self-heal): only when the
//     out-of-sync state differs from the one the last sync was run to fix
//     (a sync that could not fix a difference is not repeated for it), and
//     only once the backoff has passed: SelfHealTimeout after the first
//     sync, times 3 after each self-heal in a row, at most
//     MaxSelfHealBackoff; the count starts again after a new revision or
//     after MaxSelfHealBackoff without a self-heal.
func DecideAutoSync(in AutoSyncInput) AutoSyncDecision {
	p := in.Policy
	if p == nil || p.Automated == nil || (p.Automated.Enabled != nil && !*p.Automated.Enabled) {
		return AutoSyncDecision{Reason: "automated sync is off"}
	}
	if in.Status.Sync != OutOfSync {
		return AutoSyncDecision{Reason: "not out of sync"}
	}
	if hasError(in.Status.Conditions) {
		return AutoSyncDecision{Reason: "the comparison has errors"}
	}
	if !actionable(in.Status.Resources, p.Automated.Prune) {
		return AutoSyncDecision{Reason: "only objects that a sync would not prune differ"}
	}
	drift := DriftOf(in.Status)
	next := AutoSyncRecord{Revision: in.Status.Revision, At: in.Now, Drift: drift}
	last := in.Last
	if last == nil || last.Revision != in.Status.Revision {
		return AutoSyncDecision{Sync: true, Next: next}
	}
	if last.Failed {
		return AutoSyncDecision{Reason: "the last automated sync of this revision failed"}
	}
	if !p.Automated.SelfHeal {
		return AutoSyncDecision{Reason: "this revision was synced already and selfHeal is off"}
	}
	if last.Drift != "" && last.Drift == drift {
		return AutoSyncDecision{Reason: "the last sync of this revision did not change what differs"}
	}
	base := in.SelfHealTimeout
	if base <= 0 {
		base = SelfHealTimeout
	}
	heals := last.Heals
	since := in.Now.Sub(last.At)
	if since >= MaxSelfHealBackoff+selfHealWait(base, heals) {
		heals = 0
	}
	if wait := selfHealWait(base, heals); since < wait {
		return AutoSyncDecision{Wait: wait - since, Reason: "self-heal backoff"}
	}
	next.Heals = heals + 1
	return AutoSyncDecision{Sync: true, SelfHeal: true, Next: next}
}

// selfHealWait is the backoff before self-heal number heals+1.
func selfHealWait(base time.Duration, heals int) time.Duration {
	w := base
	for i := 0; i < heals && w < MaxSelfHealBackoff; i++ {
		w *= selfHealFactor
	}
	return min(w, MaxSelfHealBackoff)
}

// actionable reports whether a sync would change any of the out-of-sync
// objects: one that differs from Git, or one to prune that a sync would
// prune.
func actionable(rows []ResourceStatus, prune bool) bool {
	for _, r := range rows {
		if r.Hook || r.Status != OutOfSync {
			continue
		}
		if !r.RequiresPruning || (prune && !r.PruneDisabled) {
			return true
		}
	}
	return false
}

// DriftOf fingerprints what differs in a status: the out-of-sync objects
// and their diffs. Two statuses with the same fingerprint would be synced
// by the same writes.
func DriftOf(st Status) string {
	var parts []string
	for _, r := range st.Resources {
		if r.Hook || r.Status != OutOfSync {
			continue
		}
		parts = append(parts, r.Key.String()+"\x00"+r.Diff)
	}
	if len(parts) == 0 {
		return ""
	}
	sort.Strings(parts)
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}
