package source

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

// WithMounts returns a Snapshot that reads as base, except that a path
// whose first element is a key of mounts ("$values/prod.yaml") reads from
// that snapshot ("prod.yaml"). Mount points are reachable only by name:
// they are not listed in base's root directory, so a tool that walks the
// tree (a chart loader at ".") never sees them. Revision and TreeHash of
// unmounted paths are base's; TreeHash of a mounted path is the mounted
// snapshot's, and TreeHash of the root covers the mounts' roots too, so
// content caches keyed on tree hashes cover what was read through a mount.
//
// Multi-source applications use it to expose the tree of a source with
// ref NAME to the others as "$NAME/...", as Argo CD does.
func WithMounts(base Snapshot, mounts map[string]Snapshot) Snapshot {
	if len(mounts) == 0 {
		return base
	}
	return &mounted{base: base, mounts: mounts}
}

type mounted struct {
	base   Snapshot
	mounts map[string]Snapshot
}

var (
	_ fs.ReadFileFS = (*mounted)(nil)
	_ fs.ReadDirFS  = (*mounted)(nil)
	_ fs.StatFS     = (*mounted)(nil)
	_ fs.ReadLinkFS = (*mounted)(nil)
)

// route returns the snapshot and path name designates.
func (m *mounted) route(name string) (Snapshot, string) {
	first, rest, _ := strings.Cut(name, "/")
	if s, ok := m.mounts[first]; ok {
		if rest == "" {
			rest = "."
		}
		return s, rest
	}
	return m.base, name
}

// Open implements fs.FS over the mounted trees.
func (m *mounted) Open(name string) (fs.File, error) {
	s, p := m.route(name)
	return s.Open(p)
}

// ReadFile implements fs.ReadFileFS over the mounted trees.
func (m *mounted) ReadFile(name string) ([]byte, error) {
	s, p := m.route(name)
	return fs.ReadFile(s, p)
}

// ReadDir implements fs.ReadDirFS over the mounted trees.
func (m *mounted) ReadDir(name string) ([]fs.DirEntry, error) {
	s, p := m.route(name)
	return fs.ReadDir(s, p)
}

// Stat implements fs.StatFS over the mounted trees.
func (m *mounted) Stat(name string) (fs.FileInfo, error) {
	s, p := m.route(name)
	return fs.Stat(s, p)
}

// Lstat reports a file without following a final link.
func (m *mounted) Lstat(name string) (fs.FileInfo, error) {
	s, p := m.route(name)
	return fs.Lstat(s, p)
}

// ReadLink returns a link's target.
func (m *mounted) ReadLink(name string) (string, error) {
	s, p := m.route(name)
	return fs.ReadLink(s, p)
}

// Revision is the base snapshot's revision.
func (m *mounted) Revision() Revision { return m.base.Revision() }

// TreeHash of the root covers the mounts too (their root hashes, by
// name): a cache keyed on the root's hash must see a change in a mounted
// tree, even though the root's listing does not show the mounts.
func (m *mounted) TreeHash(name string) (string, error) {
	if name != "." {
		s, p := m.route(name)
		return s.TreeHash(p)
	}
	h, err := m.base.TreeHash(".")
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(m.mounts))
	for n := range m.mounts {
		names = append(names, n)
	}
	sort.Strings(names)
	sum := sha256.New()
	fmt.Fprintf(sum, "mounts\n%d:%s\n", len(h), h)
	for _, n := range names {
		mh, err := m.mounts[n].TreeHash(".")
		if err != nil {
			return "", err
		}
		fmt.Fprintf(sum, "%d:%s %d:%s\n", len(n), n, len(mh), mh)
	}
	return "sha256:" + hex.EncodeToString(sum.Sum(nil)), nil
}
