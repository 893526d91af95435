// Command aliasgen writes the root package's alias.go: the front door
// over package engine. Every exported type of engine becomes an alias,
// every exported function a wrapper of the same signature, every exported
// constant and variable a name for the engine's, each with the first
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
	out, err := gen.Generate("engine")
	if err != nil {
		fmt.Fprintln(os.Stderr, "aliasgen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile("alias.go", out, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "aliasgen:", err)
		os.Exit(1)
	}
}
