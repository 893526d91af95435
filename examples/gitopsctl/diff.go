package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/kubegitops/gitops/appstatus"
)

// runDiff prints the masked unified diff of every out-of-sync object and
// the objects that need pruning. Exit status: 0 in sync, 1 out of sync, 2
// when the comparison could not be made.
func runDiff(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cmd appCommand
	cmd.register(fs)
	var off offlineFlags
	off.register(fs)
	liveDir := fs.String("live-dir", "", "compare with the live objects recorded in this folder's YAML files instead of a cluster (renders offline)")
	if !parseFlags(fs, args) {
		return 2
	}
	if *liveDir != "" {
		live, err := loadLiveDir(*liveDir)
		if err != nil {
			return fail(stderr, "diff", err)
		}
		err = off.offlineEngine(stderr, &cmd)
		defer cmd.Close()
		if err != nil {
			return fail(stderr, "diff", err)
		}
		code, err := diffLive(ctx, cmd.engine, cmd.app, live, stdout)
		if err != nil {
			return fail(stderr, "diff", err)
		}
		return code
	}
	_, err := off.setupMaybeOffline(stderr, &cmd, nil)
	defer cmd.Close()
	if err != nil {
		return fail(stderr, "diff", err)
	}
	if off.offline {
		return fail(stderr, "diff", fmt.Errorf("no cluster to compare with: give --live-dir DIR to compare with a recorded live state"))
	}
	st, err := cmd.engine.Refresh(ctx, cmd.app)
	if err != nil {
		return fail(stderr, "diff", err)
	}
	for _, r := range st.Resources {
		switch {
		case r.RequiresPruning && r.PruneDisabled:
			// Argo CD shows such an object as "ignored (Prune=false)".
			fmt.Fprintf(stdout, "===== %s: live only, not in Git (kept: its sync-options say Prune=false, or Prune=confirm and sync --prune deletes it only with --confirm-prune)\n", r.Key)
		case r.RequiresPruning:
			fmt.Fprintf(stdout, "===== %s: live only, not in Git (pruned by sync --prune)\n", r.Key)
		case r.Status == appstatus.OutOfSync:
			fmt.Fprintf(stdout, "===== %s\n", r.Key)
			text := r.Diff
			if text != "" && !strings.HasSuffix(text, "\n") {
				text += "\n"
			}
			fmt.Fprint(stdout, text)
		}
	}
	for _, c := range st.Conditions {
		fmt.Fprintf(stderr, "%s: %s\n", c.Type, c.Message)
	}
	switch st.Sync {
	case appstatus.Synced:
		return 0
	case appstatus.OutOfSync:
		return 1
	default:
		var unknown []string
		for _, r := range st.Resources {
			if r.Status == appstatus.Unknown {
				unknown = append(unknown, r.Key.String())
			}
		}
		fmt.Fprintf(stderr, "gitopsctl diff: %s: comparison is %s", cmd.app.Name, st.Sync)
		if len(unknown) > 0 {
			fmt.Fprintf(stderr, " for %s", strings.Join(unknown, ", "))
		}
		if len(st.Conditions) == 0 {
			fmt.Fprint(stderr, " (no condition says why)")
		} else {
			fmt.Fprint(stderr, " (the conditions above say why)")
		}
		fmt.Fprintln(stderr)
		return 2
	}
}
