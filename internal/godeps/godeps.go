// Package godeps lists the packages a package of this module imports,
// directly or not, with the go command, for tests that guard what a
// package costs the hosts that import it.
package godeps

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// List returns `go list -deps pkg`: pkg and every package it imports,
// transitively, standard library included, one import path each.
func List(ctx context.Context, pkg string) ([]string, error) {
	out, err := exec.CommandContext(ctx, "go", "list", "-deps", pkg).Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return nil, fmt.Errorf("go list -deps %s: %w: %s", pkg, err, strings.TrimSpace(string(exit.Stderr)))
		}
		return nil, fmt.Errorf("go list -deps %s: %w", pkg, err)
	}
	return strings.Fields(string(out)), nil
}
