package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/project"
	"github.com/robfig/cron/v3"
)

// windowHorizon is how far ahead the portal looks for the time a blocked
// sync may run again.
const windowHorizon = 14 * 24 * time.Hour

// maxFires bounds the firings of one window looked at within the horizon
// (a window firing every minute has 20,160 in 14 days).
const maxFires = 2000

// windowView says whether the project's sync windows block a manual sync
// of the app now (project.SyncAllowed, as the engine decides when asked to
// sync), which window and why, and when a sync is next allowed.
type windowView struct {
	Blocked  bool   `json:"blocked"`
	Reason   string `json:"reason,omitempty"`
	Kind     string `json:"kind,omitempty"`
	Schedule string `json:"schedule,omitempty"`
	Duration string `json:"duration,omitempty"`
	// OpensAt is the first time within 14 days the sync is allowed; zero
	// when none is (OpensUnknown).
	OpensAt time.Time `json:"opensAt,omitzero"`
	// Error is set when a window of the project cannot be read (a bad
	// schedule, duration or time zone); the engine refuses the sync then.
	Error string `json:"error,omitempty"`
}

// syncWindow is a's window state at now; nil when nothing blocks.
func (s *server) syncWindow(a *gitops.Application, now time.Time) *windowView {
	proj, err := s.opts.Engine.Settings().Project(projectOf(a))
	if err != nil {
		return &windowView{Blocked: true, Error: err.Error(), Reason: err.Error()}
	}
	d, err := project.SyncAllowed(proj, a, now, true)
	if err != nil {
		return &windowView{Blocked: true, Error: err.Error(), Reason: err.Error()}
	}
	if d.Allowed {
		return nil
	}
	v := &windowView{Blocked: true, Reason: d.Reason, Kind: d.Blocking.Kind, Schedule: d.Blocking.Schedule, Duration: d.Blocking.Duration}
	v.OpensAt = nextAllowed(proj, a, now)
	return v
}

// nextAllowed is the first time after now within windowHorizon when
// project.SyncAllowed lets a manual sync of a run: the decision can only
// change when a matching window opens (its firing) or closes (firing plus
// duration), so those instants are the candidates.
func nextAllowed(p *v1alpha1.AppProject, a *gitops.Application, now time.Time) time.Time {
	var cands []time.Time
	for _, w := range p.Spec.SyncWindows {
		if !project.WindowMatches(w, a) {
			continue
		}
		sched, err := cron.ParseStandard(w.Schedule)
		if err != nil {
			continue
		}
		dur, err := time.ParseDuration(w.Duration)
		if err != nil {
			continue
		}
		loc := time.UTC
		if w.TimeZone != "" {
			if loc, err = time.LoadLocation(w.TimeZone); err != nil {
				continue
			}
		}
		t := now.In(loc).Add(-dur)
		for range maxFires {
			t = sched.Next(t)
			if t.IsZero() || t.After(now.Add(windowHorizon)) {
				break
			}
			for _, c := range []time.Time{t, t.Add(dur)} {
				if c.After(now) {
					cands = append(cands, c.Add(time.Second))
				}
			}
		}
	}
	slices.SortFunc(cands, func(x, y time.Time) int { return x.Compare(y) })
	for _, c := range cands {
		if d, err := project.SyncAllowed(p, a, c, true); err == nil && d.Allowed {
			return c.Add(-time.Second).UTC()
		}
	}
	return time.Time{}
}

// String says the window state for the Sync button's title and the
// page's note: what blocks, and when a sync is next allowed (not when the
// blocking window opened).
func (v *windowView) String() string {
	if v.OpensAt.IsZero() {
		return fmt.Sprintf("Sync blocked: %s; no sync is allowed within the next 14 days", v.Reason)
	}
	return fmt.Sprintf("Sync blocked: %s; syncs are allowed again at %s", v.Reason, v.OpensAt.Format("2006-01-02 15:04Z"))
}
