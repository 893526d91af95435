package sops

import (
	"os"
	"strings"
	"testing"
)

// regexpLine returns the first line of s that starts with prefix.
func regexpLine(t testing.TB, s, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	t.Fatalf("no line %q in:\n%s", prefix, s)
	return ""
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
