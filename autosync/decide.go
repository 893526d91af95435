package autosync

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"k8s.io/apimachinery/pkg/util/wait"
)

// SelfHealTimeout is the least time between two self-heal syncs of one
// app at one revision, and the first step of the self-heal backoff
// (Argo CD's controller.self.heal.backoff.timeout.seconds default, 2 s).
const SelfHealTimeout = 2 * time.Second

// MaxSelfHealBackoff caps the wait between self-heal syncs of one revision
// (Argo CD's selfHealBackoff maxDuration, 5 minutes).
const MaxSelfHealBackoff = 5 * time.Minute

// selfHealFactor multiplies the wait after each self-heal of a revision
// (Argo CD's selfHealBackoff factor, 3).
const selfHealFactor = 3

// Record is what the automated-sync decision remembers of the last
// automated sync of an app. A host keeps one per app (the run loop in
// memory, the operator in the Application's status) and updates it with
// Next after every decision to sync.
type Record struct {
	// Revision is the revision the last automated sync was for.
	Revision string `json:"revision"`
	// Sources are the app's sources (spec.source or spec.sources) the
	// last automated sync was for; nil when not known (a record kept
	// before they were).
	Sources []v1alpha1.ApplicationSource `json:"sources,omitempty"`
	// Failed reports that sync did not succeed.
	Failed bool `json:"failed,omitempty"`
	// Message says why a failed sync failed (the decision's SyncError
	// condition repeats it).
	Message string `json:"message,omitempty"`
	// At is when it started.
	At time.Time `json:"at"`
	// Heals counts the self-heal syncs of Revision in a row; the backoff
	// grows with it.
	Heals int `json:"heals,omitempty"`
}

// Input is what the automated-sync decision looks at.
type Input struct {
	// Policy is the app's sync policy.
	Policy *v1alpha1.SyncPolicy
	// Status is the refresh just made.
	Status appstatus.Status
	// Sources are the app's sources now (spec.source or spec.sources).
	Sources []v1alpha1.ApplicationSource
	// Last is the record of the app's last automated sync; nil when none.
	Last *Record
	// Now is the time of the decision.
	Now time.Time
	// SelfHealTimeout is the first self-heal wait; 0 means SelfHealTimeout.
	// Backoff, when set, wins over it.
	SelfHealTimeout time.Duration
	// Backoff, when set, is the self-heal backoff: Argo CD's
	// controller.self.heal.backoff.* (DefaultBackoff holds its defaults).
	// Nil: DefaultBackoff, or with SelfHealTimeout set, SelfHealTimeout
	// times 3 after each self-heal in a row, at most MaxSelfHealBackoff.
	Backoff *Backoff
}

// Backoff is the wait between self-heal syncs of one app at one revision:
// Duration after the first sync, times Factor after each self-heal in a
// row, at most Cap; the count starts again once Cooldown has passed since
// the last automated sync without another self-heal.
type Backoff struct {
	// Duration is the first wait (controller.self.heal.backoff.timeout.seconds).
	Duration time.Duration
	// Factor multiplies the wait after each self-heal in a row
	// (controller.self.heal.backoff.factor); below 1 counts as 1.
	Factor float64
	// Cap is the longest wait (controller.self.heal.backoff.cap.seconds);
	// zero means none.
	Cap time.Duration
	// Cooldown is how long after the last automated sync the count of
	// self-heals starts again (controller.self.heal.backoff.cooldown.seconds);
	// zero means Cap plus the current wait.
	Cooldown time.Duration
}

// DefaultBackoff returns Argo CD's self-heal backoff: 2 s, times 3, at
// most 5 minutes, the count starting again after 330 s.
func DefaultBackoff() Backoff {
	return Backoff{Duration: 2 * time.Second, Factor: 3, Cap: 5 * time.Minute, Cooldown: 330 * time.Second}
}

// FixedBackoff is the wait of Argo CD's controller.self.heal.timeout.seconds
// without a backoff (controller.self.heal.backoff.timeout.seconds 0): d
// between any two self-heals.
func FixedBackoff(d time.Duration) Backoff {
	return Backoff{Duration: d, Factor: 1, Cap: d, Cooldown: d}
}

// Decision is the outcome of Decide.
type Decision struct {
	// Sync reports that an automated sync should run now.
	Sync bool
	// SelfHeal reports that the sync is a self-heal: the same revision as
	// the last automated sync, run again because the live state drifted.
	SelfHeal bool
	// Wait, when Sync is false, is how long until the decision may change
	// by time alone (a self-heal backoff); 0 means only a new refresh
	// outcome can change it.
	Wait time.Duration
	// Reason says why no sync runs (for logs and status). While a
	// self-heal waits for its backoff it says so, with the attempt to come
	// and the time left (as Argo CD's controller logs "Skipping auto-sync:
	// already attempted sync to ... (retrying in ...)").
	Reason string
	// HealAttempt is the number of the self-heal in a row that runs now
	// (SelfHeal) or that waits for the backoff (Wait), from 1; 0 for
	// anything else. It is Argo CD's operation.sync.autoHealAttemptsCount
	// of that self-heal.
	HealAttempt int
	// Condition, when set, is a condition the app's status carries
	// because of the decision: a SyncError while the last automated sync
	// of the app's revision failed (Argo CD's "Failed sync attempt"), so
	// that every host shows it, not only the last operation.
	Condition *appstatus.Condition
	// Next is the record to keep when the sync runs (Failed and Message
	// are the caller's to set once it knows).
	Next Record
}

// Decide decides whether an app with automated sync is synced now,
// after a refresh. Its rules, which the run loop and the operator share:
//   - no automated policy, or automated.enabled false: no sync;
//   - the app is not OutOfSync, or the refresh carries an error condition:
//     no sync;
//   - every out-of-sync object is one that only needs pruning while a sync
//     would not prune it (automated prune is off, or the live object says
//     Prune=false or Prune=confirm): no sync, since it would change nothing
//     (Argo CD: "need to prune extra resources only");
//   - a revision other than the last automated sync's, or sources other
//     than its (a parameter, a path, a values edit: Argo CD compares the
//     operation's syncResult.source with spec.source), when known: sync;
//   - the same revision after a failed sync: no sync (the retry policy
//     already retried; only a new revision is synced again), and a
//     SyncError condition that says so (Condition);
//   - the same revision without selfHeal: no sync;
//   - the same revision with selfHeal (a self-heal, HealAttempt counting
//     them in a row): once the backoff
//     has passed since the last automated sync started, whatever differs
//     (the same drift as last time included: a person may make the same
//     change twice), as Input.Backoff says (Argo CD's
//     controller.self.heal.backoff.*): Duration after the first sync, times
//     Factor after each self-heal in a row, at most Cap; without it,
//     DefaultBackoff (Argo CD's defaults: 2 s, times 3, at most 5 minutes),
//     or SelfHealTimeout, times 3, at most MaxSelfHealBackoff, when set;
//     until then no sync, Wait the time left and Reason naming it; A drift a sync
//     cannot fix (another controller writes the field back) is so retried
//     ever less often, at most once per Cap, never in a loop; the count
//     starts again after a new revision or once Cooldown (default: Cap
//     plus the current wait) has passed without a self-heal.
func Decide(in Input) Decision {
	p := in.Policy
	if p == nil || p.Automated == nil || (p.Automated.Enabled != nil && !*p.Automated.Enabled) {
		return Decision{Reason: "automated sync is off"}
	}
	if in.Status.Sync != appstatus.OutOfSync {
		return Decision{Reason: "not out of sync"}
	}
	if appstatus.HasError(in.Status.Conditions) {
		return Decision{Reason: "the comparison has errors"}
	}
	if !actionable(in.Status.Resources, p.Automated.Prune) {
		return Decision{Reason: "only objects that a sync would not prune differ"}
	}
	next := Record{Revision: in.Status.Revision, Sources: in.Sources, At: in.Now}
	last := in.Last
	if last == nil || last.Revision != in.Status.Revision || !sameSources(last.Sources, in.Sources) {
		return Decision{Sync: true, Next: next}
	}
	if last.Failed {
		msg := "Failed last sync attempt to " + last.Revision
		if last.Message != "" {
			msg += ": " + last.Message
		}
		return Decision{Reason: "the last automated sync of this revision failed",
			Condition: &appstatus.Condition{Type: appstatus.ConditionSyncError, Message: msg}}
	}
	if !p.Automated.SelfHeal {
		return Decision{Reason: "this revision was synced already and selfHeal is off"}
	}
	b := in.backoff()
	heals := last.Heals
	since := in.Now.Sub(last.At)
	cooldown := b.Cooldown
	if cooldown <= 0 {
		cooldown = b.Cap + b.wait(heals)
	}
	if since >= cooldown {
		heals = 0
	}
	if wait := b.wait(heals); since < wait {
		left := wait - since
		return Decision{Wait: left, HealAttempt: heals + 1,
			Reason: fmt.Sprintf("self-heal backoff: already synced %s %s ago, self-heal attempt %d in %s", last.Revision, since.Round(time.Second), heals+1, left.Round(time.Second))}
	}
	next.Heals = heals + 1
	return Decision{Sync: true, SelfHeal: true, HealAttempt: next.Heals, Next: next}
}

// StartedMessage is what a host says when it starts an automated sync of
// revision: Argo CD's "Initiated automated sync to 'revision'", and for a
// self-heal (healAttempt, Decision.HealAttempt, above 0) the same with
// which self-heal it is, so that healing a drift never reads like rolling
// out a new commit.
func StartedMessage(revision string, healAttempt int) string {
	if healAttempt > 0 {
		return fmt.Sprintf("Initiated automated sync to '%s' (self-heal attempt %d: the live state drifted from the revision already synced)", revision, healAttempt)
	}
	return fmt.Sprintf("Initiated automated sync to '%s'", revision)
}

// backoff is in's self-heal backoff: Backoff, DefaultBackoff when
// neither it nor SelfHealTimeout is set, else SelfHealTimeout times 3 up
// to MaxSelfHealBackoff.
func (in Input) backoff() Backoff {
	if in.Backoff != nil {
		return *in.Backoff
	}
	if in.SelfHealTimeout <= 0 {
		return DefaultBackoff()
	}
	return Backoff{Duration: in.SelfHealTimeout, Factor: selfHealFactor, Cap: MaxSelfHealBackoff}
}

// wait is the backoff before self-heal number heals+1: step heals+1 of
// the self-heal wait.Backoff.
func (b Backoff) wait(heals int) time.Duration {
	f := b.Factor
	if f < 1 {
		f = 1
	}
	capd := b.Cap
	if capd <= 0 {
		capd = 24 * time.Hour
	}
	wb := wait.Backoff{Duration: min(b.Duration, capd), Factor: f, Cap: capd, Steps: heals + 1}
	var w time.Duration
	for range heals + 1 {
		w = wb.Step()
	}
	return w
}

// actionable reports whether a sync would change any of the out-of-sync
// objects: one that differs from Git, or one to prune that a sync would
// prune.
func actionable(rows []appstatus.ResourceRow, prune bool) bool {
	for _, r := range rows {
		if r.Hook || r.Status != appstatus.OutOfSync {
			continue
		}
		if !r.RequiresPruning || (prune && !r.PruneDisabled) {
			return true
		}
	}
	return false
}

// sameSources reports whether the sources of the last automated sync are
// the app's sources now; unknown ones (nil) are taken as the same. They
// are compared as JSON, so that an empty list and a missing one, which
// the API server does not tell apart, are equal.
func sameSources(last, now []v1alpha1.ApplicationSource) bool {
	if last == nil {
		return true
	}
	a, errA := json.Marshal(last)
	b, errB := json.Marshal(now)
	return errA == nil && errB == nil && bytes.Equal(a, b)
}
