// Command filecycles prints the reference cycles among the files of a Go
// package, largest first (package filegraph):
//
//	go run ./internal/filegraph/cmd/filecycles ./engine
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/kubegitops/gitops/internal/filegraph"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: filecycles <package>")
		os.Exit(2)
	}
	g, err := filegraph.Load(context.Background(), ".", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cycles := g.Cycles()
	fmt.Printf("%s: %d files, largest reference cycle %d files\n", g.Package, len(g.Files), g.Largest())
	for _, c := range cycles {
		fmt.Printf("%d: %s\n", len(c), strings.Join(c, " "))
	}
}
