package main

import (
	"os"
	"strings"
	"testing"
)

// The README shows this program whole; the two must not drift apart, and
// it must stay under 40 lines.
func TestREADMEShowsThisProgram(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```go\n"+string(src)+"```") {
		t.Fatal("README.md's Embedding section does not hold examples/minimal/main.go as it is")
	}
	if n := strings.Count(string(src), "\n"); n >= 40 {
		t.Fatalf("main.go has %d lines; the minimal host must stay under 40", n)
	}
}
