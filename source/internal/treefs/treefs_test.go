package treefs

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// treeEntryBudget is what one entry of a decoded folder may keep in a
// Trees cache (the figure behind the git Source's sharedTrees bound).
const treeEntryBudget = 96

// TestDecodedTreeCostPerEntry: a monorepo folder of 10,000 apps, decoded
// into a shared Trees cache, keeps at most treeEntryBudget bytes per entry,
// and a second snapshot of the same tree reads it from the cache.
func TestDecodedTreeCostPerEntry(t *testing.T) {
	const n = 10000
	st := memory.NewStorage()
	blob := st.NewEncodedObject()
	blob.SetType(plumbing.BlobObject)
	blobHash, err := st.SetEncodedObject(blob)
	if err != nil {
		t.Fatal(err)
	}
	tree := object.Tree{}
	for i := range n {
		tree.Entries = append(tree.Entries, object.TreeEntry{Name: fmt.Sprintf("app-%05d", i), Mode: filemode.Regular, Hash: blobHash})
	}
	enc := st.NewEncodedObject()
	if err := tree.Encode(enc); err != nil {
		t.Fatal(err)
	}
	root, err := st.SetEncodedObject(enc)
	if err != nil {
		t.Fatal(err)
	}
	tree.Entries = nil

	shared := NewTrees(4)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	first := NewShared(st, root, shared)
	if _, err := first.ReadDir("."); err != nil {
		t.Fatal(err)
	}
	first = nil
	runtime.GC()
	runtime.ReadMemStats(&ms)
	perEntry := (int64(ms.HeapAlloc) - int64(before)) / n
	t.Logf("a decoded folder keeps %d bytes per entry", perEntry)
	if perEntry > treeEntryBudget {
		t.Errorf("a decoded folder keeps %d bytes per entry, budget %d", perEntry, treeEntryBudget)
	}
	if shared.c.Len() != 1 {
		t.Fatalf("the shared cache holds %d trees, want 1", shared.c.Len())
	}
	second := NewShared(failingReader{}, root, shared)
	if entries, err := second.ReadDir("."); err != nil || len(entries) != n {
		t.Fatalf("second snapshot: %d entries, %v; want %d from the shared cache", len(entries), err, n)
	}
	runtime.KeepAlive(shared)
}

// failingReader has no objects: what an FS reads through it must come
// from the shared cache.
type failingReader struct{}

func (failingReader) EncodedObject(plumbing.ObjectType, plumbing.Hash) (plumbing.EncodedObject, error) {
	return nil, plumbing.ErrObjectNotFound
}

func (failingReader) EncodedObjectSize(plumbing.Hash) (int64, error) {
	return 0, plumbing.ErrObjectNotFound
}
