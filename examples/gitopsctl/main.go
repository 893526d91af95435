package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// command is one subcommand: its name, a one-line summary and its body,
// which gets the arguments after the name and returns the exit status.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"demo", "a guided tour: local cluster, Git server, sync, self-heal, a commit rolled out", runDemo},
		{"render", "print an application's rendered manifests (--app FILE)", runRender},
		{"diff", "show what differs from Git (exit 1 when out of sync)", runDiff},
		{"sync", "sync an application once, with a progress table per wave", runSync},
		{"status", "show an application's sync status, health and resources", runStatus},
		{"agent", "run the engine on the Applications of --apps FILE|DIR until Ctrl-C", runAgent},
		{"shards", "list the replicas sharing apps in a namespace: members, heartbeat, apps each owns (shards --namespace NS)", runShards},
		{"cluster", "start a local cluster (cluster up) or build its programs (cluster build)", runCluster},
		{"health-test", "run Argo CD format Lua health tests under a folder", runHealthTest},
		{"notifications", "evaluate a notification trigger or render a template offline", runNotifications},
		{"action", "list or run an object's resource actions (action list|run --app FILE RESOURCE [ACTION])", runAction},
		{"image-update", "check an application's images like Argo CD Image Updater (--app FILE [--dry-run])", runImageUpdate},
		{"action-test", "run Argo CD format resource action tests under a folder", runActionTest},
		{"appset", "print the Applications an ApplicationSet generates, without a cluster (appset generate --appset FILE)", runAppSet},
		{"hydrate", "hydrate an application's spec.sourceHydrator once into a local clone, for CI (hydrate --app FILE --clone DIR)", runHydrate},
		{"preview", "what a Git change does to every app, for a pull request (preview --repo URL|DIR --base REF --head REF --apps FILE|DIR)", runPreview},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		return 2
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "gitopsctl: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: gitopsctl COMMAND [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
}
