package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
	"k8s.io/apimachinery/pkg/util/wait"
)

// runSync syncs an application once, printing a progress table per wave
// and the final result. As argocd app sync, it waits for the operation to
// finish (each wave but the last waits for health, as sync waves do), not
// for the app to turn healthy unless --health is given; --timeout bounds
// the wait. Exit status: 0 when the sync succeeded, 1 when it failed or
// timed out, 2 when it could not start.
func runSync(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	stdout = newLockedWriter(stdout) // the syncer reports progress from its own goroutine
	fs := flag.NewFlagSet("sync", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cmd appCommand
	cmd.register(fs)
	prune := fs.Bool("prune", false, "delete objects of the app that are no longer in Git")
	dryRun := fs.Bool("dry-run", false, "plan and validate on the server; write nothing")
	confirm := fs.Bool("confirm-prune", false, "confirm deletions of objects marked Prune=confirm")
	waitHealth := fs.Bool("health", false, "also wait for the objects of the last wave to be healthy (argocd app wait --health)")
	async := fs.Bool("async", false, "refused: gitopsctl runs the operation itself, so it cannot return before the operation ends")
	var timeout timeoutFlag
	fs.Var(&timeout, "timeout", "give up waiting after this long (a duration such as 90s, or seconds as argocd's --timeout); 0: no limit")
	if !parseFlags(fs, args) {
		return 2
	}
	if *async {
		return fail(stderr, "sync", errAsync)
	}
	table := newProgressTable(stdout, nil)
	err := cmd.setup(stderr, func(o *gitops.Options) {
		o.Sync.OnProgress = table.OnProgress
		o.Sync.WaitFinalWave = *waitHealth
		if !*dryRun {
			if lh, err := newLiveHealth(o.Clusters[0].Config, o.Health); err == nil {
				table.health = lh.Of
			}
		}
	})
	defer cmd.Close()
	if err != nil {
		return fail(stderr, "sync", err)
	}
	opCtx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		opCtx, cancel = context.WithTimeout(ctx, time.Duration(timeout))
	}
	defer cancel()
	res, err := cmd.engine.Sync(opCtx, cmd.app, gitops.SyncRequest{Prune: *prune, DryRun: *dryRun, ConfirmPrune: *confirm, Manual: true})
	if timeout > 0 && ctx.Err() == nil && errors.Is(opCtx.Err(), context.DeadlineExceeded) && res.Phase == sync.Running {
		printRows(stdout, res.Results, false)
		return failSync(stderr, &syncTimeoutError{After: time.Duration(timeout), Waiting: stillRunning(res, table.health)})
	}
	if len(res.Results) == 0 && err != nil {
		return fail(stderr, "sync", err)
	}
	printResult(stdout, res, table.shown())
	if res.Phase == sync.Succeeded && !*dryRun {
		// Show where the app stands now (Progressing, unless --health
		// waited for the last wave).
		if st, err := settledStatus(ctx, cmd.engine, cmd.app); err == nil {
			fmt.Fprintln(stdout)
			printStatus(stdout, cmd.app.Name, st)
		}
	}
	if res.Phase != sync.Succeeded {
		// The result above says why, row by row: not again here.
		fmt.Fprintf(stderr, "gitopsctl sync: %s: the sync ended %s\n", cmd.app.Name, res.Phase)
		return 1
	}
	return 0
}

// errAsync refuses --async: argocd app sync --async returns while Argo
// CD's controller carries the operation on; gitopsctl is the controller,
// and the operation would end with the process.
var errAsync = errors.New("--async is not supported: gitopsctl sync runs the operation in this process, which would end it on return; use --timeout, or run gitopsctl agent with an automated sync policy")

// syncTimeoutError is a sync that did not finish within --timeout: the
// objects it still waited for, each with its health.
type syncTimeoutError struct {
	After   time.Duration
	Waiting []string
}

// Error implements error.
func (e *syncTimeoutError) Error() string {
	if len(e.Waiting) == 0 {
		return fmt.Sprintf("timed out after %s", e.After)
	}
	return fmt.Sprintf("timed out after %s waiting for %s", e.After, strings.Join(e.Waiting, ", "))
}

// failSync prints a sync's timeout and returns exit status 1.
func failSync(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "gitopsctl sync: %v\n", err)
	return 1
}

// stillRunning names the objects an interrupted operation still waited
// for, each with its message, else its live health when health is known.
func stillRunning(res sync.Result, health func(resource.Key) string) []string {
	var out []string
	for _, r := range res.Results {
		if r.Status != sync.TaskRunning && r.Status != sync.TaskPending {
			continue
		}
		what := r.Key.String()
		// The row's message says what it waits for (its health and why);
		// without one, its live health does.
		switch {
		case r.Message != "":
			what += " (" + oneLine(r.Message) + ")"
		case health != nil && !r.Hook:
			what += " (" + health(r.Key) + ")"
		}
		out = append(out, what)
	}
	return out
}

// timeoutFlag is --timeout: a Go duration, or a whole number of seconds as
// argocd's --timeout takes.
type timeoutFlag time.Duration

// String implements flag.Value.
func (t *timeoutFlag) String() string { return time.Duration(*t).String() }

// Set implements flag.Value.
func (t *timeoutFlag) Set(v string) error {
	if n, err := strconv.ParseUint(v, 10, 32); err == nil {
		*t = timeoutFlag(time.Duration(n) * time.Second)
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return fmt.Errorf("want a duration (90s, 5m) or seconds, got %q", v)
	}
	*t = timeoutFlag(d)
	return nil
}

// settleWithin bounds how long settledStatus refreshes again after a
// succeeded sync.
const settleWithin = 3 * time.Second

// settledStatus refreshes app after a succeeded sync. The engine's cluster
// cache learns of what the sync wrote through its watch, a moment after
// the writes: a refresh in that moment reports an object just created as
// Missing. So while the app is not Synced it refreshes again, with a
// growing pause, for at most settleWithin; an app that truly differs
// after the sync is reported as it is once the time is up.
func settledStatus(ctx context.Context, e *gitops.Engine, app *gitops.Application) (appstatus.Status, error) {
	deadline := time.Now().Add(settleWithin)
	pause := wait.Backoff{Duration: 50 * time.Millisecond, Factor: 2, Cap: time.Second, Steps: 100}
	for {
		st, err := e.Refresh(ctx, app)
		if err != nil || st.Sync == appstatus.Synced || time.Now().After(deadline) {
			return st, err
		}
		t := time.NewTimer(pause.Step())
		select {
		case <-ctx.Done():
			t.Stop()
			return st, nil
		case <-t.C:
		}
	}
}
