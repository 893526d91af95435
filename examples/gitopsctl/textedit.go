package main

import (
	"fmt"
	"io/fs"
	"strings"
)

// readFile reads one file of a tree.
func readFile(fsys fs.FS, path string) ([]byte, error) {
	data, err := fs.ReadFile(fsys, path)
	if err != nil {
		return nil, fmt.Errorf("demo repository: %w", err)
	}
	return data, nil
}

// replaceOnce replaces the one occurrence of old in s, and fails when old
// occurs zero or several times (the demo's edits must be exact).
func replaceOnce(s, old, new string) (string, error) {
	if n := strings.Count(s, old); n != 1 {
		return "", fmt.Errorf("%q occurs %d times, want once", old, n)
	}
	return strings.Replace(s, old, new, 1), nil
}
