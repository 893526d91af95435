package main

import (
	"fmt"
	"io"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/autosync"
	"github.com/kubegitops/gitops/state"
	"github.com/kubegitops/gitops/sync"
)

// printSelfHeal writes, for an app with automated sync and selfHeal that
// is OutOfSync after an automated sync of its revision, what the agent's
// run loop does next and when: autosync.Decide's decision (the agent's
// backoff is Argo CD's default, 2 s times 3 up to 5 minutes), read from
// the last operation as the record of the last automated sync. Nothing
// for any other app.
func printSelfHeal(w io.Writer, app *v1alpha1.Application, st appstatus.Status, op *state.OperationState, now time.Time) {
	p := app.Spec.SyncPolicy
	if p == nil || p.Automated == nil || !p.Automated.SelfHeal || st.Sync != appstatus.OutOfSync || op == nil || !op.Automated || op.DryRun || op.Phase == sync.Running {
		return
	}
	last := &autosync.Record{Revision: op.Revision, At: op.StartedAt, Heals: op.SelfHealAttempt, Failed: op.Phase != sync.Succeeded, Message: op.Message}
	d := autosync.Decide(autosync.Input{Policy: p, Status: st, Last: last, Now: now})
	switch {
	case d.Wait > 0 && d.HealAttempt > 0:
		fmt.Fprintf(w, "Self-heal: attempt %d due at %s (in %s, self-heal backoff): the live state drifted from %s, which the last automated sync synced\n",
			d.HealAttempt, now.Add(d.Wait).Format(time.RFC3339), d.Wait.Round(time.Second), shortRev(op.Revision))
	case d.SelfHeal:
		fmt.Fprintf(w, "Self-heal: attempt %d due now: the live state drifted from %s; a running agent heals it at its next refresh\n", d.HealAttempt, shortRev(op.Revision))
	}
}
