package project

import (
	"fmt"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/robfig/cron/v3"
)

// WindowDecision says whether a sync may run now and, when not, which
// window blocks it.
type WindowDecision struct {
	// Allowed reports whether the sync may run.
	Allowed bool
	// Blocking is the window that blocks it (a deny window that is open, or
	// an allow window that is closed), nil when allowed.
	Blocking *v1alpha1.SyncWindow
	// Reason says why, for a status condition.
	Reason string
}

// WindowOpen reports whether the window is open at now: whether its
// schedule fired within the Duration before now.
func WindowOpen(w v1alpha1.SyncWindow, now time.Time) (bool, error) {
	sched, err := cron.ParseStandard(w.Schedule)
	if err != nil {
		return false, fmt.Errorf("sync window %q: %w", w.Schedule, err)
	}
	d, err := time.ParseDuration(w.Duration)
	if err != nil {
		return false, fmt.Errorf("sync window duration %q: %w", w.Duration, err)
	}
	loc := time.UTC
	if w.TimeZone != "" {
		if loc, err = time.LoadLocation(w.TimeZone); err != nil {
			return false, fmt.Errorf("sync window time zone %q: %w", w.TimeZone, err)
		}
	}
	local := now.In(loc)
	// The first firing after (now - duration) opens a window that is
	// still open at now exactly when it is not after now.
	next := sched.Next(local.Add(-d).Add(-time.Second))
	return !next.After(local), nil
}

// WindowMatches reports whether the window applies to the app: its name,
// its destination namespace or its destination cluster (server or name)
// matches one of the window's globs. With andOperator, as in Argo CD,
// every selector list the window sets (applications, clusters,
// namespaces) must match, and a window that sets none matches nothing.
func WindowMatches(w v1alpha1.SyncWindow, app *v1alpha1.Application) bool {
	d := app.Spec.Destination
	name := GlobAny(w.Applications, app.Name)
	cluster := (d.Server != "" && GlobAny(w.Clusters, d.Server)) || (d.Name != "" && GlobAny(w.Clusters, d.Name))
	namespace := d.Namespace != "" && GlobAny(w.Namespaces, d.Namespace)
	if !w.AndOperator {
		return name || cluster || namespace
	}
	set := false
	for _, sel := range []struct {
		patterns []string
		matched  bool
	}{{w.Applications, name}, {w.Clusters, cluster}, {w.Namespaces, namespace}} {
		if len(sel.patterns) == 0 {
			continue
		}
		if !sel.matched {
			return false
		}
		set = true
	}
	return set
}

// SyncAllowed decides, with Argo CD's rules, whether the app may sync at
// now: an open deny window that matches blocks; when matching allow windows
// exist, at least one must be open; deny beats allow. A manual sync passes a
// blocking window that sets manualSync.
func SyncAllowed(p *v1alpha1.AppProject, app *v1alpha1.Application, now time.Time, manual bool) (WindowDecision, error) {
	var allows []*v1alpha1.SyncWindow
	anyAllowOpen := false
	for i := range p.Spec.SyncWindows {
		w := &p.Spec.SyncWindows[i]
		if !WindowMatches(*w, app) {
			continue
		}
		open, err := WindowOpen(*w, now)
		if err != nil {
			return WindowDecision{}, err
		}
		switch w.Kind {
		case "deny":
			if open && !(manual && w.ManualSync) {
				return WindowDecision{Blocking: w, Reason: fmt.Sprintf("deny window %q (%s) is open", w.Schedule, w.Duration)}, nil
			}
		case "allow":
			allows = append(allows, w)
			anyAllowOpen = anyAllowOpen || open
		}
	}
	if len(allows) > 0 && !anyAllowOpen {
		for _, w := range allows {
			if manual && w.ManualSync {
				return WindowDecision{Allowed: true}, nil
			}
		}
		return WindowDecision{Blocking: allows[0], Reason: fmt.Sprintf("no allow window is open (next: %q for %s)", allows[0].Schedule, allows[0].Duration)}, nil
	}
	return WindowDecision{Allowed: true}, nil
}
