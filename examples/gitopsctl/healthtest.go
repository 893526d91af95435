package main

import (
	"context"
	"fmt"
	"io"
)

// runHealthTest runs Argo CD format Lua health tests (see the health package).
func runHealthTest(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "gitopsctl health-test: not available yet")
	return 2
}
