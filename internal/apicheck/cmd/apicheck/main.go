package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/kubegitops/gitops/internal/apicheck"
)

func main() {
	opts := apicheck.DefaultOptions()
	flag.StringVar(&opts.Dir, "dir", opts.Dir, "the module's root")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	opts.Tools.Log = func(format string, args ...any) { fmt.Fprintf(os.Stderr, "apicheck: "+format+"\n", args...) }
	res, err := apicheck.Check(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, c := range res.Listed {
		fmt.Printf("listed in CHANGELOG.md: %s\n", c.Message)
	}
	if len(res.Breaking) == 0 {
		fmt.Printf("API compatible with %s (%s), %d incompatible changes listed in CHANGELOG.md\n",
			res.Release.Version, res.Release.Commit[:12], len(res.Listed))
		return
	}
	fmt.Fprintf(os.Stderr, "API changed incompatibly since %s (%s) (apidiff):\n", res.Release.Version, res.Release.Commit[:12])
	for _, c := range res.Breaking {
		fmt.Fprintf(os.Stderr, "- %s\n", c.Message)
	}
	fmt.Fprintln(os.Stderr, "Restore each name, or, when the change is deliberate, list it in CHANGELOG.md's \"## Unreleased\" section with what to use instead, in backticks:")
	for _, c := range res.Breaking {
		fmt.Fprintf(os.Stderr, "  `%s`\n", c.Name)
	}
	os.Exit(1)
}
