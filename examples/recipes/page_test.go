package recipes

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every Go block of docs/recipes.md is copied verbatim from a file of this
// package, so the page shows code that compiles and is tested.
func TestRecipesPageMatchesCode(t *testing.T) {
	page, err := os.ReadFile("../../docs/recipes.md")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var code strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		code.Write(data)
		code.WriteString("\n")
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(page), -1)
	if len(blocks) < 4 {
		t.Fatalf("docs/recipes.md has %d Go blocks, want one or more per recipe", len(blocks))
	}
	// A block may show several declarations of a file, or the body of an
	// Example function (without its indentation); each piece must be in
	// the code as it is.
	for _, b := range blocks {
		for _, piece := range splitDeclarations(b[1]) {
			indented := strings.ReplaceAll("\t"+strings.ReplaceAll(piece, "\n", "\n\t"), "\t\n", "\n")
			if !strings.Contains(code.String(), piece) && !strings.Contains(code.String(), indented) {
				t.Errorf("docs/recipes.md shows code that is not in examples/recipes:\n%s", piece)
			}
		}
	}
}

// splitDeclarations cuts a block before each top-level line that follows a
// blank line.
func splitDeclarations(block string) []string {
	var out []string
	lines := strings.Split(strings.TrimSuffix(block, "\n"), "\n")
	start := 0
	for i := 1; i < len(lines); i++ {
		if lines[i-1] == "" && lines[i] != "" && lines[i][0] != '\t' && lines[i][0] != ' ' && lines[i][0] != '}' {
			out = append(out, strings.Join(lines[start:i-1], "\n"))
			start = i
		}
	}
	return append(out, strings.Join(lines[start:], "\n"))
}
