// Command aliasgen writes the root package's alias.go: the front door
// over package engine. Each name of gen.FrontDoor (the engine's names a
// host needs to load apps, build an engine and run it; the rest is named
// from package engine) becomes an alias (a type), a wrapper of the same
// signature (a function) or a name for the engine's (a constant or
// variable), each with the first
// paragraph of the engine's doc comment and its Deprecated paragraph (its
// own, or its declaration group's: each root name carries the marker
// itself, since linters read none on a group).
//
// Run it from the module root with `go generate .` (doc.go holds the
// directive); internal/layers' TestAliasFileIsCurrent fails when alias.go
// and the engine's exported names disagree.
package main

import (
	"fmt"
	"os"

	"github.com/kubegitops/gitops/internal/aliasgen/gen"
)

func main() {
	out, err := gen.Generate("engine", gen.FrontDoor)
	if err != nil {
		fmt.Fprintln(os.Stderr, "aliasgen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile("alias.go", out, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "aliasgen:", err)
		os.Exit(1)
	}
}
