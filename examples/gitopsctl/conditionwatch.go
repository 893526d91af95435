package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
)

// appStatuses is what conditionWatch reads of a running engine.
type appStatuses interface {
	ManagedApps() []v1alpha1.AppKey
	AppStatus(key v1alpha1.AppKey) (appstatus.Status, bool)
}

// conditionWatch prints the agent's failures: one line when an app gets a
// condition (or its condition of a type says something new), one when it
// clears. It prints whatever conditions the engine records in
// Status.Conditions (ComparisonError, SyncError, InvalidSpecError,
// warnings), so an app whose render fails is not left silent.
type conditionWatch struct {
	w io.Writer
	// seen is, per app, the message of each condition type last printed.
	seen map[string]map[appstatus.ConditionType]string
}

func newConditionWatch(w io.Writer) *conditionWatch {
	return &conditionWatch{w: w, seen: map[string]map[appstatus.ConditionType]string{}}
}

// run checks the apps every period until ctx ends.
func (c *conditionWatch) run(ctx context.Context, src appStatuses, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.check(src, time.Now())
		}
	}
}

// check compares each app's conditions with those last printed.
func (c *conditionWatch) check(src appStatuses, now time.Time) {
	keys := src.ManagedApps()
	managed := make(map[string]bool, len(keys))
	for _, key := range keys {
		app := key.Name
		managed[app] = true
		st, ok := src.AppStatus(key)
		if !ok {
			continue // not refreshed yet
		}
		c.compare(app, st.Conditions, now)
	}
	for app := range c.seen {
		if !managed[app] {
			delete(c.seen, app) // removed from the agent: nothing to clear
		}
	}
}

func (c *conditionWatch) compare(app string, conds []appstatus.Condition, now time.Time) {
	prev := c.seen[app]
	cur := make(map[appstatus.ConditionType]string, len(conds))
	for _, cond := range conds {
		if _, dup := cur[cond.Type]; dup {
			cur[cond.Type] += "; " + cond.Message
			continue
		}
		cur[cond.Type] = cond.Message
	}
	stamp := now.Format("15:04:05")
	for _, cond := range conds {
		msg := cur[cond.Type]
		if old, had := prev[cond.Type]; had && old == msg {
			continue
		}
		fmt.Fprintf(c.w, "%s %-14s %s: %s: %s\n", stamp, "Condition", app, cond.Type, oneLine(msg))
		if prev == nil {
			prev = map[appstatus.ConditionType]string{}
			c.seen[app] = prev
		}
		prev[cond.Type] = msg
	}
	types := make([]string, 0, len(prev))
	for t := range prev {
		if _, still := cur[t]; !still {
			types = append(types, string(t))
		}
	}
	sort.Strings(types)
	for _, t := range types {
		fmt.Fprintf(c.w, "%s %-14s %s: %s cleared\n", stamp, "Condition", app, t)
		delete(prev, appstatus.ConditionType(t))
	}
}
