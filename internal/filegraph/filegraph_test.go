package filegraph

import (
	"context"
	"slices"
	"testing"
)

func TestLoadFindsTheRing(t *testing.T) {
	g, err := Load(context.Background(), ".", "./testdata/cyc")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"a.go": {"b.go"},                 // a field of B
		"b.go": {"c.go"},                 // a method
		"c.go": {"a.go", "b.go", "e.go"}, // a constant, a type, a variable
		"d.go": {"a.go"},
	}
	for f, refs := range want {
		if !slices.Equal(g.Refs[f], refs) {
			t.Errorf("%s refers to %v, want %v", f, g.Refs[f], refs)
		}
	}
	if refs := g.Refs["e.go"]; len(refs) != 0 {
		t.Errorf("e.go refers to %v, want nothing", refs)
	}
	cycles := g.Cycles()
	if len(cycles) != 1 || !slices.Equal(cycles[0], []string{"a.go", "b.go", "c.go"}) {
		t.Fatalf("cycles %v, want [[a.go b.go c.go]]", cycles)
	}
	if g.Largest() != 3 {
		t.Errorf("largest %d, want 3", g.Largest())
	}
}

func TestCyclesLargestFirst(t *testing.T) {
	g := &Graph{
		Files: []string{"a", "b", "c", "d", "e", "f"},
		Refs: map[string][]string{
			"a": {"b"}, "b": {"a"}, // a ring of 2
			"c": {"d"}, "d": {"e"}, "e": {"c", "f"}, // a ring of 3, f outside
		},
	}
	got := g.Cycles()
	if len(got) != 2 || !slices.Equal(got[0], []string{"c", "d", "e"}) || !slices.Equal(got[1], []string{"a", "b"}) {
		t.Fatalf("cycles %v", got)
	}
	if (&Graph{Files: []string{"x"}}).Largest() != 1 {
		t.Error("a graph without cycles has largest 1")
	}
}

func TestLoadNamesABadPackage(t *testing.T) {
	if _, err := Load(context.Background(), ".", "./testdata/missing"); err == nil {
		t.Fatal("no error for a missing package")
	}
}
