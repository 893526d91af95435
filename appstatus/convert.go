package appstatus

import (
	"strings"
	"time"

	"github.com/kubegitops/gitops/sync"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Refreshed is prev with the outcome of a refresh: sync, health,
// resources and conditions come from st; operationState and history are
// kept. A condition already in prev keeps its lastTransitionTime, so an
// unchanged refresh gives an equal status.
func Refreshed(prev ApplicationStatus, st Status, sources int, now time.Time) ApplicationStatus {
	out := prev
	out.Sync = SyncStatus{Status: string(st.Sync)}
	out.Sync.Revision, out.Sync.Revisions = SplitRevision(st.Revision, sources)
	out.Health = WithHealth(prev.Health, string(st.Health.Code), st.Health.Message, now)
	out.Resources = nil
	for _, row := range st.Resources {
		rs := ResourceStatus{
			Group: row.Key.Group, Kind: row.Key.Kind, Namespace: row.Key.Namespace, Name: row.Key.Name,
			Status: string(row.Status), Hook: row.Hook, RequiresPruning: row.RequiresPruning,
		}
		if row.Health != nil {
			rs.Health = &HealthStatus{Status: string(row.Health.Code), Message: row.Health.Message}
		}
		out.Resources = append(out.Resources, rs)
	}
	out.Conditions = Conditions(prev.Conditions, st.Conditions, now)
	t := metav1.NewTime(now.Truncate(time.Second))
	out.ReconciledAt = &t
	return out
}

// WithHealth is the app's health after a refresh that judged it code
// (with message): lastTransitionTime is kept while the code stays the
// same, and is now when it changes.
func WithHealth(prev HealthStatus, code, message string, now time.Time) HealthStatus {
	out := HealthStatus{Status: code, Message: message, LastTransitionTime: prev.LastTransitionTime}
	if prev.Status != code || out.LastTransitionTime == nil {
		t := metav1.NewTime(now.Truncate(time.Second))
		out.LastTransitionTime = &t
	}
	return out
}

// Conditions converts the engine's conditions, keeping the transition time
// of those that were already there.
func Conditions(prev []ApplicationCondition, cs []Condition, now time.Time) []ApplicationCondition {
	if len(cs) == 0 {
		return nil
	}
	since := map[string]*metav1.Time{}
	for _, c := range prev {
		since[c.Type+"\x00"+c.Message] = c.LastTransitionTime
	}
	out := make([]ApplicationCondition, 0, len(cs))
	for _, c := range cs {
		ac := ApplicationCondition{Type: string(c.Type), Message: c.Message}
		if t, ok := since[ac.Type+"\x00"+ac.Message]; ok && t != nil {
			ac.LastTransitionTime = t
		} else {
			t := metav1.NewTime(now.Truncate(time.Second))
			ac.LastTransitionTime = &t
		}
		out = append(out, ac)
	}
	return out
}

// SplitRevision turns the engine's revision (commas between sources) into
// Argo CD's revision (one source) or revisions (several).
func SplitRevision(rev string, sources int) (string, []string) {
	if sources <= 1 || rev == "" {
		return rev, nil
	}
	return "", strings.Split(rev, ",")
}

// SyncResult converts what a sync did into Argo CD's syncResult.
func SyncResult(res sync.Result, sources int) *SyncOperationResult {
	out := &SyncOperationResult{}
	out.Revision, out.Revisions = SplitRevision(res.State.Revision, sources)
	for _, rr := range res.Results {
		r := ResourceResult{Group: rr.Key.Group, Kind: rr.Key.Kind, Namespace: rr.Key.Namespace, Name: rr.Key.Name,
			Status: resultCode(rr), Message: rr.Message, SyncPhase: string(rr.Phase)}
		if rr.Hook {
			r.HookType = string(rr.Phase)
			r.HookPhase = hookPhase(rr.Status)
		}
		out.Resources = append(out.Resources, r)
	}
	return out
}

// resultCode is Argo CD's result code of one object: Pruned for a prune,
// SyncFailed for a failed task, PruneSkipped for a prune that was skipped,
// Synced otherwise.
func resultCode(rr sync.ResourceResult) string {
	switch {
	case rr.Status == sync.TaskFailed:
		return "SyncFailed"
	case rr.Action == sync.Pruned:
		return "Pruned"
	case rr.Status == sync.TaskSkipped && rr.Action == sync.Skipped:
		return "PruneSkipped"
	}
	return "Synced"
}

// hookPhase maps a hook task's status to Argo CD's operation phase.
func hookPhase(s sync.TaskStatus) string {
	switch s {
	case sync.TaskSucceeded, sync.TaskSkipped:
		return string(sync.Succeeded)
	case sync.TaskFailed:
		return string(sync.Failed)
	}
	return string(sync.Running)
}

// WithHistory appends a deployment to history, unless it repeats the
// revision of the last entry (a self-heal at the same revision is not a
// new deployment), keeping at most limit entries.
func WithHistory(h []RevisionHistory, entry RevisionHistory, limit *int64) []RevisionHistory {
	if n := len(h); n > 0 {
		last := h[n-1]
		if last.Revision == entry.Revision && strings.Join(last.Revisions, ",") == strings.Join(entry.Revisions, ",") {
			return h
		}
		entry.ID = last.ID + 1
	}
	h = append(append([]RevisionHistory(nil), h...), entry)
	max := 10
	if limit != nil {
		max = int(*limit)
	}
	if max >= 0 && len(h) > max {
		h = h[len(h)-max:]
	}
	return h
}

// JoinRevisions is the engine's form of a synced revision (commas between
// sources).
func JoinRevisions(r *SyncOperationResult) string {
	if len(r.Revisions) > 0 {
		return strings.Join(r.Revisions, ",")
	}
	return r.Revision
}
