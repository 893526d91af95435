package layers

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubegitops/gitops/internal/aliasgen/gen"
)

// TestAliasFileIsCurrent fails when the root's alias.go does not name
// exactly the front door's names as internal/aliasgen writes them:
// run `go generate .` at the module root after changing the engine's API.
func TestAliasFileIsCurrent(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	want, err := gen.Generate("engine", gen.FrontDoor)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("alias.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("alias.go is not what internal/aliasgen writes for package engine: run `go generate .` at the module root")
	}
}
