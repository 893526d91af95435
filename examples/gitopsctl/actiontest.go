package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/kubegitops/gitops/health/actions"
)

// runActionTest runs Argo CD format resource action tests: every
// <group>/<Kind>/actions folder under DIR against the discoveryTests and
// actionTests of its action_test.yaml, at actions.TestClock, judged as
// Argo CD's own action test judges them (actions.RunTests). Like
// health-test it prints one line per failing case (per case with -v) and a
// summary, and exits 1 when a case fails, 2 on usage errors.
func runActionTest(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("action-test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	verbose := fs.Bool("v", false, "print passing cases too")
	timeout := fs.Duration("timeout", time.Second, "time limit of one script call")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gitopsctl action-test [-v] [-timeout 1s] DIR")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	dir := fs.Arg(0)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		fmt.Fprintf(stderr, "gitopsctl action-test: %s is not a folder\n", dir)
		return 2
	}
	opts := actions.DefaultOptions()
	opts.Lua.Limits.Timeout = *timeout
	report, err := actions.RunTests(ctx, os.DirFS(dir), opts)
	if err != nil {
		fmt.Fprintf(stderr, "gitopsctl action-test: %v\n", err)
		return 1
	}
	for _, r := range report.Results {
		if *verbose || !r.Passed() {
			fmt.Fprintln(stdout, r)
		}
	}
	failed := len(report.Failed())
	fmt.Fprintf(stdout, "%d action folders, %d cases, %d failed\n", report.Folders, len(report.Results), failed)
	if report.Folders == 0 {
		fmt.Fprintf(stderr, "gitopsctl action-test: no actions/discovery.lua under %s\n", dir)
		return 1
	}
	if failed > 0 {
		return 1
	}
	return 0
}
