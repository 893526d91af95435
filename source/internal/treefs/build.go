package treefs

import (
	"path"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// FromFiles stores files (keyed by slash-separated paths relative to the
// root, each valid in the sense of fs.ValidPath) as Git blobs and trees in
// memory and returns the FS of their root tree: TreeHash then gives the
// Git object ids the files would have if committed. Sources whose content
// arrives as an archive (chart archives, OCI artifacts) build their
// snapshots with it.
func FromFiles(files map[string][]byte) (*FS, error) {
	st := memory.NewStorage()
	type dir struct {
		entries map[string]*dir
		blobs   map[string]plumbing.Hash
	}
	newDir := func() *dir { return &dir{entries: map[string]*dir{}, blobs: map[string]plumbing.Hash{}} }
	root := newDir()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		obj := st.NewEncodedObject()
		obj.SetType(plumbing.BlobObject)
		obj.SetSize(int64(len(files[n])))
		w, err := obj.Writer()
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(files[n]); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		h, err := st.SetEncodedObject(obj)
		if err != nil {
			return nil, err
		}
		d := root
		dirPart, base := path.Split(n)
		for _, elem := range strings.Split(strings.TrimSuffix(dirPart, "/"), "/") {
			if elem == "" {
				continue
			}
			next, ok := d.entries[elem]
			if !ok {
				next = newDir()
				d.entries[elem] = next
			}
			d = next
		}
		d.blobs[base] = h
	}
	var store func(d *dir) (plumbing.Hash, error)
	store = func(d *dir) (plumbing.Hash, error) {
		var t object.Tree
		for name, sub := range d.entries {
			h, err := store(sub)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			t.Entries = append(t.Entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
		}
		for name, h := range d.blobs {
			t.Entries = append(t.Entries, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h})
		}
		key := func(e object.TreeEntry) string {
			if e.Mode == filemode.Dir {
				return e.Name + "/"
			}
			return e.Name
		}
		sort.Slice(t.Entries, func(i, j int) bool { return key(t.Entries[i]) < key(t.Entries[j]) })
		obj := st.NewEncodedObject()
		if err := t.Encode(obj); err != nil {
			return plumbing.ZeroHash, err
		}
		return st.SetEncodedObject(obj)
	}
	h, err := store(root)
	if err != nil {
		return nil, err
	}
	return New(st, h), nil
}
