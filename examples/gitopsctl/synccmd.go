package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/sync"
)

// runSync syncs an application once, printing a progress table per wave
// and the final result. Exit status: 0 when the sync succeeded, 1 when it
// failed, 2 when it could not start.
func runSync(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	stdout = newLockedWriter(stdout) // the syncer reports progress from its own goroutine
	fs := flag.NewFlagSet("sync", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cmd appCommand
	cmd.register(fs)
	prune := fs.Bool("prune", false, "delete objects of the app that are no longer in Git")
	dryRun := fs.Bool("dry-run", false, "plan and validate on the server; write nothing")
	confirm := fs.Bool("confirm-prune", false, "confirm deletions of objects marked Prune=confirm")
	if !parseFlags(fs, args) {
		return 2
	}
	table := newProgressTable(stdout, nil)
	err := cmd.setup(stderr, func(o *gitops.Options) {
		o.Sync.OnProgress = table.OnProgress
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
	res, err := cmd.engine.Sync(ctx, cmd.app, gitops.SyncRequest{Prune: *prune, DryRun: *dryRun, ConfirmPrune: *confirm, Manual: true})
	if len(res.Results) == 0 && err != nil {
		return fail(stderr, "sync", err)
	}
	printResult(stdout, res)
	if res.Phase == sync.Succeeded && !*dryRun {
		// The waves waited for health; show where the app stands now.
		if st, err := cmd.engine.Refresh(ctx, cmd.app); err == nil {
			fmt.Fprintln(stdout)
			printStatus(stdout, cmd.app.Name, st)
		}
	}
	if res.Phase != sync.Succeeded {
		if err != nil {
			fail(stderr, "sync", err)
		}
		return 1
	}
	return 0
}
