package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/state"
)

// runStatus refreshes an application once and prints its sync status,
// health, revision, a row per resource and its conditions. Exit status: 0
// when the status could be computed (whatever it says), 2 otherwise.
func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cmd appCommand
	cmd.register(fs)
	output := fs.String("o", "table", "output format: table or json")
	if !parseFlags(fs, args) {
		return 2
	}
	if *output != "table" && *output != "json" {
		return fail(stderr, "status", fmt.Errorf("-o %q: want table or json", *output))
	}
	err := cmd.setup(stderr, nil)
	defer cmd.Close()
	if err != nil {
		return fail(stderr, "status", err)
	}
	st, err := cmd.engine.Refresh(ctx, cmd.app)
	op, operr := cmd.engine.LastOperation(ctx, v1alpha1.KeyOf(cmd.app))
	if operr != nil {
		fmt.Fprintf(stderr, "gitopsctl status: last operation: %v\n", operr)
	}
	if *output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(statusJSON{Status: st, LastOperation: op}); jerr != nil {
			return fail(stderr, "status", jerr)
		}
	} else {
		printStatus(stdout, cmd.app.Name, st)
		printOperation(stdout, op)
		printSelfHeal(stdout, cmd.app, st, op, time.Now())
	}
	if err != nil {
		if len(st.Conditions) > 0 {
			// The conditions printed above carry the error: once is enough.
			fmt.Fprintf(stderr, "gitopsctl status: %s: the refresh failed (see its conditions)\n", cmd.app.Name)
			return 2
		}
		return fail(stderr, "status", err)
	}
	return 0
}

// statusJSON is status -o json: the refresh's status with the last
// operation beside its fields.
type statusJSON struct {
	appstatus.Status
	LastOperation *state.OperationState `json:"lastOperation,omitempty"`
}

// printOperation writes the last operation for people, so that a failed
// automated sync can be understood afterwards.
func printOperation(w io.Writer, op *state.OperationState) {
	if op == nil {
		return
	}
	who := "manual"
	if op.Automated {
		who = "automated"
	}
	if op.DryRun {
		who += ", dry run"
	}
	fmt.Fprintf(w, "\nLast operation: %s (%s sync of %s", op.Phase, who, op.Revision)
	if op.SelfHealAttempt > 0 {
		fmt.Fprintf(w, ", self-heal attempt %d of a drift", op.SelfHealAttempt)
	}
	fmt.Fprintf(w, ", started %s", op.StartedAt.Format(time.RFC3339))
	if !op.FinishedAt.IsZero() {
		fmt.Fprintf(w, ", took %s", op.FinishedAt.Sub(op.StartedAt).Round(time.Millisecond))
	}
	fmt.Fprintln(w, ")")
	if msg := resultMessage(op.Message, op.Results); msg != "" {
		fmt.Fprintf(w, "  %s\n", oneLine(msg))
	}
	if len(op.Results) > 0 {
		printRows(w, op.Results, !op.FinishedAt.IsZero())
	}
	if op.Truncated > 0 {
		fmt.Fprintf(w, "  (%d more rows not kept)\n", op.Truncated)
	}
}

// printStatus writes a status for people.
func printStatus(w io.Writer, name string, st appstatus.Status) {
	fmt.Fprintf(w, "Name:      %s\n", name)
	fmt.Fprintf(w, "Sync:      %s\n", st.Sync)
	health := string(st.Health.Code)
	if st.Health.Message != "" {
		health += " (" + st.Health.Message + ")"
	}
	fmt.Fprintf(w, "Health:    %s\n", health)
	fmt.Fprintf(w, "Revision:  %s\n", st.Revision)
	if !st.ReconciledAt.IsZero() {
		fmt.Fprintf(w, "Reconciled: %s\n", st.ReconciledAt.Format(time.RFC3339))
	}
	if len(st.Resources) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "RESOURCE\tSTATUS\tHEALTH\tNOTE")
		for _, r := range st.Resources {
			h := ""
			if r.Health != nil {
				h = string(r.Health.Code)
			}
			note := ""
			switch {
			case r.Hook:
				note = "hook"
			case r.RequiresPruning:
				note = "requires pruning"
			case r.Health != nil && r.Health.Message != "" && r.Health.Code != "Healthy":
				note = r.Health.Message
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Key, r.Status, h, note)
		}
		tw.Flush()
	}
	if len(st.Conditions) > 0 {
		fmt.Fprintln(w, "\nConditions:")
		for _, c := range st.Conditions {
			fmt.Fprintf(w, "  %s: %s\n", c.Type, c.Message)
		}
	}
}
