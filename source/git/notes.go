package git

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Git notes, as `git notes` keeps them: refs/notes/<namespace> points to a
// commit whose tree has a blob per annotated object, named by the object's
// hex id, either flat ("1a2b...") or fanned out into folders of two hex
// digits ("1a/2b..."), which git does once a namespace holds many notes.
// Both are read here; a note is written flat (git reads every layout, and
// fans the tree out again at its next write).

// maxNoteBytes bounds a note read.
const maxNoteBytes = 1 << 20

// NotesRef returns the reference of a notes namespace ("hydrator.metadata"
// is refs/notes/hydrator.metadata); a full refs/notes/ name is kept.
func NotesRef(namespace string) plumbing.ReferenceName {
	if strings.HasPrefix(namespace, "refs/notes/") {
		return plumbing.ReferenceName(namespace)
	}
	return plumbing.ReferenceName("refs/notes/" + namespace)
}

// readNote returns the note of object c in the notes commit notes (its
// content, and false when c has none or notes is zero).
func readNote(st storer.EncodedObjectStorer, notes, c plumbing.Hash) ([]byte, bool, error) {
	if notes.IsZero() {
		return nil, false, nil
	}
	nc, err := object.GetCommit(st, notes)
	if err != nil {
		return nil, false, fmt.Errorf("notes commit %s: %w", short(notes), err)
	}
	blob, ok, err := findNote(st, nc.TreeHash, c.String())
	if err != nil || !ok {
		return nil, false, err
	}
	b, err := object.GetBlob(st, blob)
	if err != nil {
		return nil, false, err
	}
	r, err := b.Reader()
	if err != nil {
		return nil, false, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, maxNoteBytes))
	return data, err == nil, err
}

// findNote looks the note named name (the rest of a hex id) up in tree t,
// descending into fan-out folders that are a prefix of it.
func findNote(st storer.EncodedObjectStorer, t plumbing.Hash, name string) (plumbing.Hash, bool, error) {
	tree, err := object.GetTree(st, t)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	for _, en := range tree.Entries {
		switch {
		case en.Name == name && en.Mode.IsFile():
			return en.Hash, true, nil
		case en.Mode == filemode.Dir && len(en.Name) < len(name) && strings.HasPrefix(name, en.Name):
			if h, ok, err := findNote(st, en.Hash, name[len(en.Name):]); err != nil || ok {
				return h, ok, err
			}
		}
	}
	return plumbing.ZeroHash, false, nil
}

// addNote writes a notes commit on top of notes (zero: the namespace's
// first) whose tree is notes' with the note of c set to content, as `git
// notes add -f` does, and returns it.
func addNote(st storer.EncodedObjectStorer, notes, c plumbing.Hash, content []byte, sig object.Signature) (plumbing.Hash, error) {
	blob, err := writeBlob(st, content)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	var root plumbing.Hash
	var parents []plumbing.Hash
	if !notes.IsZero() {
		nc, err := object.GetCommit(st, notes)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("notes commit %s: %w", short(notes), err)
		}
		root, parents = nc.TreeHash, []plumbing.Hash{notes}
	}
	entries, err := withoutNote(st, root, c.String())
	if err != nil {
		return plumbing.ZeroHash, err
	}
	entries = append(entries, object.TreeEntry{Name: c.String(), Mode: filemode.Regular, Hash: blob})
	tree, err := writeTree(st, entries)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	commit := &object.Commit{Author: sig, Committer: sig, Message: "Notes added by 'git notes add'\n", TreeHash: tree, ParentHashes: parents}
	return writeObject(st, commit)
}

// withoutNote returns the entries of tree t (none when zero) without the
// note named name, wherever the fan-out put it; a fan-out folder left
// empty goes too.
func withoutNote(st storer.EncodedObjectStorer, t plumbing.Hash, name string) ([]object.TreeEntry, error) {
	if t.IsZero() {
		return nil, nil
	}
	tree, err := object.GetTree(st, t)
	if err != nil {
		return nil, err
	}
	var out []object.TreeEntry
	for _, en := range tree.Entries {
		switch {
		case en.Name == name:
			continue
		case en.Mode == filemode.Dir && len(en.Name) < len(name) && strings.HasPrefix(name, en.Name):
			sub, err := withoutNote(st, en.Hash, name[len(en.Name):])
			if err != nil {
				return nil, err
			}
			if len(sub) == 0 {
				continue
			}
			h, err := writeTree(st, sub)
			if err != nil {
				return nil, err
			}
			en.Hash = h
		}
		out = append(out, en)
	}
	return out, nil
}

// writeTree stores a tree of entries, sorted as git sorts them (a
// folder's name compares as if it ended with '/').
func writeTree(st storer.EncodedObjectStorer, entries []object.TreeEntry) (plumbing.Hash, error) {
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
	return writeObject(st, &object.Tree{Entries: entries})
}

// writeBlob stores content as a blob.
func writeBlob(st storer.EncodedObjectStorer, content []byte) (plumbing.Hash, error) {
	obj := st.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := io.Copy(w, bytes.NewReader(content)); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return st.SetEncodedObject(obj)
}

// writeObject encodes and stores a tree or commit.
func writeObject(st storer.EncodedObjectStorer, o interface {
	Encode(plumbing.EncodedObject) error
}) (plumbing.Hash, error) {
	obj := st.NewEncodedObject()
	if err := o.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return st.SetEncodedObject(obj)
}
