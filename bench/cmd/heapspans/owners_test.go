package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// sink keeps the warm-up's allocations from being optimised away.
var sink []byte

// holder keeps leaves that another function allocated.
type holder struct{ leaves [][]byte }

//go:noinline
func newLeaf() []byte { return make([]byte, 4096) }

//go:noinline
func newHolder(n int) *holder {
	h := &holder{leaves: make([][]byte, 0, n)}
	for range n {
		h.leaves = append(h.leaves, newLeaf())
	}
	return h
}

// A dump with allocation samples names who keeps the selected objects
// (the holder's allocation site for leaves allocated elsewhere), and the
// spans table still reads it.
func TestOwnersNamesTheHolder(t *testing.T) {
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = old }()
	// Each P samples its next allocation at the distance the old rate
	// drew: allocate past it, so that the rate of one is in force.
	for range 64 {
		sink = make([]byte, 1<<20)
	}
	sink = nil
	h := newHolder(64)
	runtime.GC()
	path := filepath.Join(t.TempDir(), "heapdump")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	debug.WriteHeapDump(f.Fd())
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(h)

	var out bytes.Buffer
	if err := runOwners(path, &out, ownerQuery{match: regexp.MustCompile(`heapspans\.newLeaf`), class: 4096}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	if len(lines) < 3 || !strings.HasPrefix(strings.TrimSpace(lines[2]), "64 ") || !strings.Contains(lines[2], "heapspans.newHolder") {
		t.Fatalf("want the 64 leaves owned by newHolder's allocation, got:\n%s", out.String())
	}
	out.Reset()
	var live float64
	if err := run(path, &out); err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Sscanf(out.String(), "live %f MiB", &live); err != nil || live < 0.25 {
		t.Fatalf("spans table: live %.2f MiB (%v), want the leaves' 0.25 MiB at least:\n%s", live, err, out.String())
	}
}
