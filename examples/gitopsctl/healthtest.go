package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/kubegitops/gitops/health"
)

// runHealthTest runs Argo CD format Lua health tests: every
// <group>/<Kind>/health.lua under DIR against the cases of the
// health_test.yaml next to it. It prints one line per failing case (per
// case with -v) and a summary, and exits 1 when a case fails, 2 on usage
// errors.
func runHealthTest(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("health-test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	verbose := fs.Bool("v", false, "print passing cases too")
	timeout := fs.Duration("timeout", time.Second, "time limit of one script call")
	now := fs.String("now", "", "RFC 3339 time that os.time and os.date report (default: the real clock)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gitopsctl health-test [-v] [-timeout 1s] [-now TIME] DIR")
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
		fmt.Fprintf(stderr, "gitopsctl health-test: %s is not a folder\n", dir)
		return 2
	}
	opts := health.DefaultLuaOptions()
	opts.Limits.Timeout = *timeout
	if *now != "" {
		t, err := time.Parse(time.RFC3339, *now)
		if err != nil {
			fmt.Fprintf(stderr, "gitopsctl health-test: -now: %v\n", err)
			return 2
		}
		opts.Clock = func() time.Time { return t }
	}
	report, err := health.RunScriptTests(ctx, os.DirFS(dir), opts)
	if err != nil {
		fmt.Fprintf(stderr, "gitopsctl health-test: %v\n", err)
		return 1
	}
	for _, r := range report.Results {
		if *verbose || !r.Passed() {
			fmt.Fprintln(stdout, r)
		}
	}
	failed := len(report.Failed())
	fmt.Fprintf(stdout, "%d scripts, %d cases, %d failed\n", report.Scripts, len(report.Results), failed)
	if report.Scripts == 0 {
		fmt.Fprintf(stderr, "gitopsctl health-test: no health.lua under %s\n", dir)
		return 1
	}
	if failed > 0 {
		return 1
	}
	return 0
}
