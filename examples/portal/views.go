package main

import (
	"time"

	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/state"
	"github.com/kubegitops/gitops/sync"
)

// badges is an app's status as the page header shows it.
type badges struct {
	Sync          string `json:"sync"`
	Health        string `json:"health"`
	HealthMessage string `json:"healthMessage,omitempty"`
	Revision      string `json:"revision,omitempty"`
}

func statusBadges(st appstatus.Status) badges {
	return badges{Sync: string(st.Sync), Health: string(st.Health.Code), HealthMessage: st.Health.Message, Revision: st.Revision}
}

// progressRow is one object of a running sync.
type progressRow struct {
	Key     string `json:"key"`
	Phase   string `json:"phase"`
	Wave    int    `json:"wave"`
	Hook    bool   `json:"hook,omitempty"`
	Action  string `json:"action,omitempty"`
	Status  string `json:"status"`
	Health  string `json:"health,omitempty"`
	Message string `json:"message,omitempty"`
}

// progress is the "progress" event: the rows after one wave.
type progress struct {
	Phase string        `json:"phase"`
	Wave  int           `json:"wave"`
	Final bool          `json:"final"`
	Rows  []progressRow `json:"rows"`
}

func progressView(p sync.Progress) progress {
	out := progress{Phase: p.Phase, Wave: p.Wave, Final: p.Final, Rows: resultRows(p.Results)}
	return out
}

func resultRows(rs []sync.ResourceResult) []progressRow {
	rows := make([]progressRow, 0, len(rs))
	for _, r := range rs {
		row := progressRow{Key: r.Key.String(), Phase: string(r.Phase), Wave: r.Wave, Hook: r.Hook,
			Action: string(r.Action), Status: string(r.Status), Message: r.Message}
		if r.Health != nil {
			row.Health = string(r.Health.Code)
		}
		rows = append(rows, row)
	}
	return rows
}

// operationView is the "operation" event and the app page's last
// operation.
type operationView struct {
	Phase               string        `json:"phase"`
	Message             string        `json:"message,omitempty"`
	Revision            string        `json:"revision,omitempty"`
	DryRun              bool          `json:"dryRun,omitempty"`
	StartedAt           time.Time     `json:"startedAt"`
	FinishedAt          time.Time     `json:"finishedAt,omitzero"`
	PendingConfirmation []string      `json:"pendingConfirmation,omitempty"`
	Rows                []progressRow `json:"rows,omitempty"`
}

func operationOf(op *state.OperationState) *operationView {
	if op == nil {
		return nil
	}
	return &operationView{Phase: string(op.Phase), Message: op.Message, Revision: op.Revision, DryRun: op.DryRun,
		StartedAt: op.StartedAt, FinishedAt: op.FinishedAt, Rows: resultRows(op.Results)}
}

// shortRev cuts a commit to 8 characters for people.
func shortRev(rev string) string {
	if len(rev) > 8 {
		return rev[:8]
	}
	return rev
}
