package render

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

// FuzzRootResolve: whatever the name, Resolve either refuses it with a
// typed error or returns a valid path inside the root, even through links.
func FuzzRootResolve(f *testing.F) {
	for _, s := range []string{"a/b", "../x", "/etc", "a/../../b", "link/x", "up/up/x", `C:\x`, "a//b/./c", "loop"} {
		f.Add(s)
	}
	fsys := fstest.MapFS{
		"a/b/c":   {Data: []byte("x")},
		"link":    {Data: []byte("a/b"), Mode: fs.ModeSymlink},
		"a/up":    {Data: []byte("../.."), Mode: fs.ModeSymlink},
		"up":      {Data: []byte("a/up"), Mode: fs.ModeSymlink},
		"loop":    {Data: []byte("loop2"), Mode: fs.ModeSymlink},
		"loop2":   {Data: []byte("loop"), Mode: fs.ModeSymlink},
		"a/abs":   {Data: []byte("/etc/passwd"), Mode: fs.ModeSymlink},
		"a/inner": {Data: []byte("../link/c"), Mode: fs.ModeSymlink},
	}
	root := NewRoot(fsys, Limits{})
	f.Fuzz(func(t *testing.T, name string) {
		p, err := root.Resolve(name)
		if err != nil {
			if !errors.Is(err, ErrOutsideRoot) && !errors.Is(err, ErrAbsolutePath) && !errors.Is(err, ErrSymlinkLoop) && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrInvalid) {
				var pe *PathError
				if !errors.As(err, &pe) {
					t.Fatalf("Resolve(%q): untyped error %v", name, err)
				}
			}
			return
		}
		if !fs.ValidPath(p) || p == ".." || strings.HasPrefix(p, "../") {
			t.Fatalf("Resolve(%q) = %q, not a valid path inside the root", name, p)
		}
	})
}
