package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/kubegitops/gitops/internal/testtools"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	log := func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	if err := testtools.BuildAll(ctx, log); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
