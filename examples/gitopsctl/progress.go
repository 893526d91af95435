package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	gosync "sync"
	"text/tabwriter"

	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
)

// progressTable prints a sync's progress as it happens: after each wave,
// one row per object of that wave (phase and wave, resource, action,
// status, health). Its OnProgress method is a sync.Options.OnProgress.
type progressTable struct {
	mu     gosync.Mutex
	w      io.Writer
	header bool
	// health, when set, judges a row's live object for the HEALTH column
	// when the syncer's result carries no health.
	health func(resource.Key) string
}

// newProgressTable prints to w; health may be nil.
func newProgressTable(w io.Writer, health func(resource.Key) string) *progressTable {
	return &progressTable{w: w, health: health}
}

const progressRow = "%-14s %-64s %-11s %-10s %s\n"

// OnProgress prints the rows of the wave that just finished. The syncer
// reports each wave once per operation; a retried operation prints again.
func (p *progressTable) OnProgress(pr sync.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.header {
		fmt.Fprintf(p.w, progressRow, "WAVE", "RESOURCE", "ACTION", "STATUS", "HEALTH")
		p.header = true
	}
	for _, r := range pr.Results {
		if string(r.Phase) != pr.Phase || r.Wave != pr.Wave {
			continue
		}
		fmt.Fprintf(p.w, progressRow, waveLabel(string(r.Phase), r.Wave), resourceLabel(r), actionLabel(r), r.Status, p.healthLabel(r))
	}
}

// shown reports whether the table printed any row.
func (p *progressTable) shown() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.header
}

// waveLabel is "PreSync 0" or "Sync 2": the phase and the wave.
func waveLabel(phase string, wave int) string {
	if phase == "" {
		phase = "Sync"
	}
	return phase + " " + strconv.Itoa(wave)
}

func resourceLabel(r sync.ResourceResult) string {
	s := r.Key.String()
	if r.Hook {
		s += " (hook)"
	}
	return s
}

func actionLabel(r sync.ResourceResult) string {
	if r.Action == "" {
		return "-"
	}
	return string(r.Action)
}

func (p *progressTable) healthLabel(r sync.ResourceResult) string {
	h := "-"
	switch {
	case r.Health != nil:
		h = string(r.Health.Code)
	case p.health != nil && !r.Hook && r.Action != sync.Pruned && r.Action != sync.Planned && r.Status != sync.TaskSkipped:
		h = p.health(r.Key)
	}
	return h
}

// printResult prints a sync's final result: its phase, message and a
// count of actions, and after a failure what went wrong object by
// object. When the progress table already showed the objects (shown), a
// failure adds only the rows with something to say (a failure, a
// message), so no table is printed twice; otherwise the whole table.
// Each message is printed once.
func printResult(w io.Writer, res sync.Result, shown bool) {
	counts := map[sync.Action]int{}
	for _, r := range res.Results {
		counts[r.Action]++
	}
	fmt.Fprintf(w, "\nResult: %s", res.Phase)
	if msg := resultMessage(res.Message, res.Results); msg != "" {
		fmt.Fprintf(w, " (%s)", msg)
	}
	fmt.Fprintln(w)
	first := true
	for _, a := range []sync.Action{sync.Created, sync.Configured, sync.Recreated, sync.Unchanged, sync.Pruned, sync.Planned, sync.Skipped} {
		if counts[a] == 0 {
			continue
		}
		if first {
			fmt.Fprint(w, "  ")
		} else {
			fmt.Fprint(w, ", ")
		}
		fmt.Fprintf(w, "%d %s", counts[a], a)
		first = false
	}
	if !first {
		fmt.Fprintln(w)
	}
	for _, k := range res.PendingConfirmation {
		fmt.Fprintf(w, "  %s waits for a confirmed prune (Prune=confirm)\n", k)
	}
	if res.Phase == sync.Succeeded || len(res.Results) == 0 {
		return
	}
	ended := res.Phase != sync.Running
	if !shown {
		// A failure is explained object by object: what was applied, what
		// failed and why, what never ran.
		fmt.Fprintln(w)
		printRows(w, res.Results, ended)
		return
	}
	for _, r := range res.Results {
		if st := rowStatus(r, ended); st == sync.TaskFailed || r.Message != "" {
			// The row names the object: its message need not again.
			fmt.Fprintf(w, "  %s %s: %s\n", resourceLabel(r), st, oneLine(strings.ReplaceAll(r.Message, r.Key.String()+": ", "")))
		}
	}
}

// resultMessage is an operation's message without the objects' own
// messages it repeats (the syncer's message ends with a summary of the
// failed rows, which the rows print): what failed, once.
func resultMessage(msg string, rows []sync.ResourceResult) string {
	msg = strings.TrimPrefix(msg, "sync: ")
	cut := len(msg)
	failed := 0
	for _, r := range rows {
		if r.Message == "" {
			continue
		}
		failed++
		if i := strings.Index(msg, r.Key.String()); i >= 0 && i < cut {
			cut = i
		}
	}
	if cut == len(msg) {
		return msg
	}
	if head := strings.TrimRight(msg[:cut], ": ;"); head != "" {
		return head + "; each object's row says why"
	}
	if failed == 1 {
		return "1 object failed; its row says why"
	}
	return fmt.Sprintf("%d objects failed; each object's row says why", failed)
}

// rowStatus is a row's status as a final table shows it: once the
// operation has ended (ended), a task still Running was applied and only
// its wait was cut short by another object's failure, so it reads as
// Argo CD's result for an applied resource, Synced, never Running.
func rowStatus(r sync.ResourceResult, ended bool) sync.TaskStatus {
	if ended && r.Status == sync.TaskRunning {
		return "Synced"
	}
	return r.Status
}

// printRows writes one row per object of an operation: wave, resource,
// action, status and message; ended says the operation has ended (see
// rowStatus).
func printRows(w io.Writer, rows []sync.ResourceResult, ended bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WAVE\tRESOURCE\tACTION\tSTATUS\tMESSAGE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", waveLabel(string(r.Phase), r.Wave), resourceLabel(r), actionLabel(r), rowStatus(r, ended), oneLine(r.Message))
	}
	tw.Flush()
}

// oneLine keeps a message on its row.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
