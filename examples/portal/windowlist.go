package main

import (
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/project"
)

// windowRow is one sync window of the app's project that applies to the
// app (project.WindowMatches), as the app page lists it: Argo CD's UI
// shows the same windows (GetApplicationSyncWindows' assignedWindows) and
// marks the active ones.
type windowRow struct {
	Kind        string `json:"kind"`
	Schedule    string `json:"schedule"`
	Duration    string `json:"duration"`
	TimeZone    string `json:"timeZone,omitempty"`
	ManualSync  bool   `json:"manualSync"`
	Description string `json:"description,omitempty"`
	// Active: the window is open now (project.WindowOpen).
	Active bool `json:"active"`
	// Effect says what the window does to syncs now (windowEffect).
	Effect string `json:"effect"`
	// Error is why the window cannot be read (then the engine refuses
	// the app's syncs).
	Error string `json:"error,omitempty"`
}

// appWindows is the app page's "Sync windows": the windows that apply to
// the app and whether a manual and an automated sync may start now
// (project.SyncAllowed, as the engine decides).
type appWindows struct {
	Windows []windowRow `json:"windows"`
	// Manual and Automated: a manual (automated) sync may start now.
	Manual    bool `json:"manual"`
	Automated bool `json:"automated"`
}

// windowsOf is a's windows at now; nil when none of its project's
// windows applies to it (or the project is unknown: syncWindow says so).
func (s *server) windowsOf(a *gitops.Application, now time.Time) *appWindows {
	proj, err := s.opts.Engine.Settings().Project(projectOf(a))
	if err != nil {
		return nil
	}
	out := &appWindows{}
	anyAllowOpen := false
	for _, w := range proj.Spec.SyncWindows {
		if !project.WindowMatches(w, a) {
			continue
		}
		row := windowRow{Kind: w.Kind, Schedule: w.Schedule, Duration: w.Duration, TimeZone: w.TimeZone, ManualSync: w.ManualSync,
			Description: w.Description}
		if row.Active, err = project.WindowOpen(w, now); err != nil {
			row.Error = err.Error()
		}
		anyAllowOpen = anyAllowOpen || (w.Kind == "allow" && row.Active)
		out.Windows = append(out.Windows, row)
	}
	if len(out.Windows) == 0 {
		return nil
	}
	for i := range out.Windows {
		out.Windows[i].Effect = windowEffect(out.Windows[i], anyAllowOpen)
	}
	if d, err := project.SyncAllowed(proj, a, now, true); err == nil {
		out.Manual = d.Allowed
	}
	if d, err := project.SyncAllowed(proj, a, now, false); err == nil {
		out.Automated = d.Allowed
	}
	return out
}

// windowEffect says what w does to the app's syncs now, by Argo CD's
// rules: an open deny window blocks every sync but, with manualSync, a
// manual one; a closed deny window does nothing; while some allow window
// applies, syncs run only when one is open (anyAllowOpen), and a closed
// allow window with manualSync still lets manual syncs run.
func windowEffect(w windowRow, anyAllowOpen bool) string {
	switch {
	case w.Error != "":
		return "unreadable: every sync is refused"
	case w.Kind == "deny" && w.Active && w.ManualSync:
		return "blocks automated syncs; manual syncs allowed"
	case w.Kind == "deny" && w.Active:
		return "blocks every sync"
	case w.Kind == "deny":
		return "nothing now; blocks syncs while open"
	case w.Active:
		return "allows syncs"
	case anyAllowOpen:
		return "closed; another allow window is open"
	case w.ManualSync:
		return "closed: automated syncs wait for it; manual syncs allowed"
	}
	return "closed: syncs wait for it to open"
}
