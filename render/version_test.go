package render

import (
	"os"
	"strings"
	"testing"
)

func TestLibraryVersionsMatchGoMod(t *testing.T) {
	data, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	required := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && strings.HasPrefix(f[1], "v") {
			required[strings.TrimPrefix(f[0], "require ")] = f[1]
		}
	}
	for module, v := range pinnedVersions {
		if required[module] != v {
			t.Errorf("pinned %s %s, go.mod requires %q: update pinnedVersions", module, v, required[module])
		}
		if got := LibraryVersion(module); got != module+"@"+required[module] {
			t.Errorf("LibraryVersion(%s) = %s", module, got)
		}
	}
	if v := LibraryVersion("example.com/not-linked"); v != "example.com/not-linked@unknown" {
		t.Fatalf("LibraryVersion of a missing module = %q", v)
	}
}
