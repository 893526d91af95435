package treefs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/kubegitops/gitops/source"
)

// ObjectReader is the part of a go-git object store FS reads.
type ObjectReader interface {
	EncodedObject(plumbing.ObjectType, plumbing.Hash) (plumbing.EncodedObject, error)
	EncodedObjectSize(plumbing.Hash) (int64, error)
}

// maxLinkHops bounds how many symbolic links one path may pass through
// (Linux's limit), which also ends link cycles.
const maxLinkHops = 40

// FS is the tree rooted at one tree object. It implements fs.ReadDirFS,
// fs.ReadFileFS, fs.StatFS and fs.ReadLinkFS, and is safe for concurrent
// readers.
type FS struct {
	root plumbing.Hash

	// mu serialises use of objects, whose caches are not safe for
	// concurrent use. It is held only while one object is decoded, never
	// across the reads a caller makes on an opened file.
	mu      sync.Mutex
	objects ObjectReader
	trees   map[plumbing.Hash]*treeNode
	// shared, when set, holds trees decoded by other FSs (Trees).
	shared *Trees
	// content replaces the blobs of some regular files (SetContent).
	content map[plumbing.Hash]Content
}

// Trees is a cache of decoded trees that the FSs of many snapshots share
// (NewShared). A tree object is named by the hash of its content, so one
// decoded tree serves every snapshot that holds it: a monorepo's folder of
// 10,000 apps is decoded once, not once per snapshot (each refresh of each
// app opened a snapshot and decoded it again, a cost that grew with the
// number of apps). Safe for concurrent use.
type Trees struct {
	c *lru.Cache[plumbing.Hash, *treeNode]
}

// NewTrees returns a Trees that keeps the size trees used last (at least
// one).
func NewTrees(size int) *Trees {
	c, _ := lru.New[plumbing.Hash, *treeNode](max(size, 1)) // errs only for a size below one
	return &Trees{c: c}
}

var (
	_ fs.ReadDirFS  = (*FS)(nil)
	_ fs.ReadFileFS = (*FS)(nil)
	_ fs.StatFS     = (*FS)(nil)
	_ fs.ReadLinkFS = (*FS)(nil)
)

// treeNode is a decoded tree with an index by name.
type treeNode struct {
	entries []object.TreeEntry
	byName  map[string]int
}

// New returns the FS of tree root read from objects.
func New(objects ObjectReader, root plumbing.Hash) *FS {
	return &FS{root: root, objects: objects, trees: map[plumbing.Hash]*treeNode{}}
}

// NewShared is New with the decoded trees of shared: trees it holds are
// not decoded again, and trees decoded here join it. shared may be nil.
func NewShared(objects ObjectReader, root plumbing.Hash, shared *Trees) *FS {
	s := New(objects, root)
	s.shared = shared
	return s
}

// TreeHash returns the Git object id of the tree (directory) or blob
// (file, or a link's target string) at name: exactly what
// `git rev-parse <commit>:<name>` prints. Links on the way to name are
// followed; a link at name itself is not, so a subtree hash covers the
// links it contains by their target strings, not by what they point to.
func (s *FS) TreeHash(name string) (string, error) {
	n, err := s.resolve("treehash", name, false)
	if err != nil {
		return "", err
	}
	return n.hash.String(), nil
}

// node is a resolved path: the entry's mode and object id.
type node struct {
	name string // base name ("." for the root)
	mode filemode.FileMode
	hash plumbing.Hash
}

func (n node) isDir() bool { return n.mode == filemode.Dir || n.mode == filemode.Submodule }

// resolve walks name from the root, following links on the way (and at the
// end when followLast).
func (s *FS) resolve(op, name string, followLast bool) (node, error) {
	if !fs.ValidPath(name) {
		return node{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	rootNode := node{name: ".", mode: filemode.Dir, hash: s.root}
	if name == "." {
		return rootNode, nil
	}
	parts := strings.Split(name, "/")
	cur := rootNode
	curPath := "."
	hops := 0
	for i := 0; i < len(parts); i++ {
		if cur.mode == filemode.Submodule {
			return node{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
		}
		if !cur.isDir() {
			return node{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
		}
		t, err := s.tree(cur.hash)
		if err != nil {
			return node{}, &fs.PathError{Op: op, Path: name, Err: err}
		}
		idx, ok := t.byName[parts[i]]
		if !ok {
			return node{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
		}
		ent := t.entries[idx]
		next := node{name: ent.Name, mode: ent.Mode, hash: ent.Hash}
		last := i == len(parts)-1
		if ent.Mode == filemode.Symlink && (!last || followLast) {
			hops++
			if hops > maxLinkHops {
				return node{}, &fs.PathError{Op: op, Path: name, Err: errors.New("too many levels of symbolic links")}
			}
			target, err := s.blob(ent.Hash)
			if err != nil {
				return node{}, &fs.PathError{Op: op, Path: name, Err: err}
			}
			joined, err := linkTarget(curPath, string(target))
			if err != nil {
				return node{}, &fs.PathError{Op: op, Path: name, Err: err}
			}
			// Restart from the root with the link replaced by its target.
			rest := parts[i+1:]
			parts = append(splitPath(joined), rest...)
			i = -1
			cur, curPath = rootNode, "."
			if len(parts) == 0 {
				return rootNode, nil
			}
			continue
		}
		if last {
			return next, nil
		}
		cur = next
		curPath = path.Join(curPath, ent.Name)
	}
	return cur, nil
}

// linkTarget joins a link's target to the directory holding the link and
// refuses any result outside the tree.
func linkTarget(dir, target string) (string, error) {
	if target == "" || path.IsAbs(target) {
		return "", fmt.Errorf("link target %q: %w", target, source.ErrOutsideRepository)
	}
	joined := path.Join(dir, target)
	if joined == ".." || strings.HasPrefix(joined, "../") {
		return "", fmt.Errorf("link target %q: %w", target, source.ErrOutsideRepository)
	}
	return joined, nil
}

func splitPath(p string) []string {
	if p == "." || p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// tree returns the decoded tree h, decoding it once per snapshot.
func (s *FS) tree(h plumbing.Hash) (*treeNode, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.trees[h]; ok {
		return t, nil
	}
	if s.shared != nil {
		if t, ok := s.shared.c.Get(h); ok {
			s.trees[h] = t
			return t, nil
		}
	}
	obj, err := s.objects.EncodedObject(plumbing.TreeObject, h)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", h, err)
	}
	var tr object.Tree
	if err := tr.Decode(obj); err != nil {
		return nil, fmt.Errorf("tree %s: %w", h, err)
	}
	t := &treeNode{entries: tr.Entries, byName: make(map[string]int, len(tr.Entries))}
	for i, e := range tr.Entries {
		t.byName[e.Name] = i
	}
	s.trees[h] = t
	if s.shared != nil {
		s.shared.c.Add(h, t)
	}
	return t, nil
}

// blob reads a whole blob.
func (s *FS) blob(h plumbing.Hash) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, err := s.objects.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", h, err)
	}
	r, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var buf bytes.Buffer
	buf.Grow(int(obj.Size()))
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// blobSize returns a blob's size without reading it.
func (s *FS) blobSize(h plumbing.Hash) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.objects.EncodedObjectSize(h)
}
