package render

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"sync"
)

// Root is a read-only view of a tree that no path can leave. Every renderer
// reads its files through one Root per render.
//
// Rules:
//   - names are slash-separated and relative to the root; an absolute name
//     fails with ErrAbsolutePath;
//   - names are resolved one element at a time: ".." pops an element and
//     fails with ErrOutsideRoot when there is none left; a symbolic link is
//     replaced by its target, resolved the same way from the link's
//     directory, so a chain of links that leaves the root and comes back
//     fails at the step that leaves; an absolute link target fails with
//     ErrAbsolutePath (the root's own location is unknown, so a link into
//     the tree by absolute path is refused too); more than
//     Limits.MaxSymlinks links fail with ErrSymlinkLoop;
//   - a file larger than Limits.MaxFileBytes, or one that takes the bytes
//     read by this Root past Limits.MaxTotalBytes, or the count of files
//     past Limits.MaxFiles, fails with ErrTooLarge or ErrTooManyFiles.
//
// Symbolic links are seen only when the underlying FS implements
// fs.ReadLinkFS (os.DirFS and source snapshots do). Root implements fs.FS,
// fs.ReadFileFS, fs.ReadDirFS and fs.StatFS, so it can be handed to code that
// takes an fs.FS. It is safe for concurrent use.
type Root struct {
	fsys   fs.FS
	limits Limits

	mu    sync.Mutex
	total int64
	files int
}

// NewRoot returns a Root over fsys with limits (defaults filled in).
func NewRoot(fsys fs.FS, limits Limits) *Root {
	return &Root{fsys: fsys, limits: limits.WithDefaults()}
}

// Limits returns the limits of r.
func (r *Root) Limits() Limits { return r.limits }

// BytesRead returns the bytes read through r so far.
func (r *Root) BytesRead() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// Resolve returns the canonical form of name: the path inside the root it
// designates once "." and ".." elements and symbolic links are resolved.
// A name that does not exist resolves as far as it can; the error of the
// later access reports it.
func (r *Root) Resolve(name string) (string, error) {
	p, err := r.resolve(name, true)
	if err != nil {
		return "", &PathError{Op: "resolve", Path: name, Err: err}
	}
	return p, nil
}

func (r *Root) resolve(name string, followLast bool) (string, error) {
	if name == "" {
		name = "."
	}
	if strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) || hasDriveLetter(name) {
		return "", ErrAbsolutePath
	}
	rl, canLink := r.fsys.(fs.ReadLinkFS)
	missing := false
	var stack []string
	pending := splitPath(name)
	links := 0
	for len(pending) > 0 {
		elem := pending[0]
		pending = pending[1:]
		switch elem {
		case "", ".":
			continue
		case "..":
			if len(stack) == 0 {
				return "", ErrOutsideRoot
			}
			stack = stack[:len(stack)-1]
			continue
		}
		stack = append(stack, elem)
		if !canLink || missing || (len(pending) == 0 && !followLast) {
			continue
		}
		cur := strings.Join(stack, "/")
		info, err := rl.Lstat(cur)
		if err != nil {
			// A missing element: let the caller's access report it.
			// Later elements are resolved lexically.
			if errors.Is(err, fs.ErrNotExist) {
				missing = true
				continue
			}
			return "", err
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		links++
		if links > r.limits.MaxSymlinks {
			return "", ErrSymlinkLoop
		}
		target, err := rl.ReadLink(cur)
		if err != nil {
			return "", err
		}
		if strings.HasPrefix(target, "/") || strings.HasPrefix(target, `\`) || hasDriveLetter(target) {
			return "", ErrAbsolutePath
		}
		stack = stack[:len(stack)-1]
		pending = append(splitPath(target), pending...)
	}
	if len(stack) == 0 {
		return ".", nil
	}
	p := strings.Join(stack, "/")
	if !fs.ValidPath(p) {
		return "", fs.ErrInvalid // e.g. not UTF-8
	}
	return p, nil
}

func splitPath(p string) []string {
	return strings.Split(strings.ReplaceAll(p, `\`, "/"), "/")
}

func hasDriveLetter(p string) bool {
	return len(p) >= 2 && p[1] == ':' && ((p[0] >= 'a' && p[0] <= 'z') || (p[0] >= 'A' && p[0] <= 'Z'))
}

// charge counts one file of size bytes against the budgets.
func (r *Root) charge(size int64) error {
	if size > r.limits.MaxFileBytes {
		return fmt.Errorf("%w: file of %d bytes, limit %d", ErrTooLarge, size, r.limits.MaxFileBytes)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.files+1 > r.limits.MaxFiles {
		return fmt.Errorf("%w: more than %d files", ErrTooManyFiles, r.limits.MaxFiles)
	}
	if r.total+size > r.limits.MaxTotalBytes {
		return fmt.Errorf("%w: render read more than %d bytes", ErrTooLarge, r.limits.MaxTotalBytes)
	}
	r.files++
	r.total += size
	return nil
}

// ReadFile reads the named file within the budgets.
func (r *Root) ReadFile(name string) ([]byte, error) {
	p, err := r.resolve(name, true)
	if err != nil {
		return nil, &PathError{Op: "open", Path: name, Err: err}
	}
	f, err := r.fsys.Open(p)
	if err != nil {
		return nil, &PathError{Op: "open", Path: name, Err: unwrapFS(err)}
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, &PathError{Op: "stat", Path: name, Err: unwrapFS(err)}
	}
	if info.IsDir() {
		return nil, &PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
	}
	if err := r.charge(info.Size()); err != nil {
		return nil, &PathError{Op: "read", Path: name, Err: err}
	}
	// Read at most one byte past the cap: a file that grows, or an FS that
	// reports a wrong size, cannot exceed the budget.
	data, err := io.ReadAll(io.LimitReader(f, r.limits.MaxFileBytes+1))
	if err != nil {
		return nil, &PathError{Op: "read", Path: name, Err: unwrapFS(err)}
	}
	if int64(len(data)) > r.limits.MaxFileBytes {
		return nil, &PathError{Op: "read", Path: name, Err: fmt.Errorf("%w: file larger than %d bytes", ErrTooLarge, r.limits.MaxFileBytes)}
	}
	if extra := int64(len(data)) - info.Size(); extra > 0 {
		if err := r.charge(extra); err != nil {
			return nil, &PathError{Op: "read", Path: name, Err: err}
		}
	}
	return data, nil
}

// Stat describes the named file, following symbolic links inside the root.
func (r *Root) Stat(name string) (fs.FileInfo, error) {
	p, err := r.resolve(name, true)
	if err != nil {
		return nil, &PathError{Op: "stat", Path: name, Err: err}
	}
	info, err := fs.Stat(r.fsys, p)
	if err != nil {
		return nil, &PathError{Op: "stat", Path: name, Err: unwrapFS(err)}
	}
	return info, nil
}

// ReadDir lists the named directory, sorted by name. Entries that are
// symbolic links are reported as links; resolve them with Stat.
func (r *Root) ReadDir(name string) ([]fs.DirEntry, error) {
	p, err := r.resolve(name, true)
	if err != nil {
		return nil, &PathError{Op: "readdir", Path: name, Err: err}
	}
	entries, err := fs.ReadDir(r.fsys, p)
	if err != nil {
		return nil, &PathError{Op: "readdir", Path: name, Err: unwrapFS(err)}
	}
	return entries, nil
}

// Open opens the named file for reading. Its content is charged against the
// budgets when the file is opened (by its size) and cut at MaxFileBytes.
func (r *Root) Open(name string) (fs.File, error) {
	p, err := r.resolve(name, true)
	if err != nil {
		return nil, &PathError{Op: "open", Path: name, Err: err}
	}
	f, err := r.fsys.Open(p)
	if err != nil {
		return nil, &PathError{Op: "open", Path: name, Err: unwrapFS(err)}
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, &PathError{Op: "stat", Path: name, Err: unwrapFS(err)}
	}
	if info.IsDir() {
		return f, nil
	}
	if err := r.charge(info.Size()); err != nil {
		f.Close()
		return nil, &PathError{Op: "open", Path: name, Err: err}
	}
	return &cappedFile{File: f, r: io.LimitReader(f, r.limits.MaxFileBytes)}, nil
}

// cappedFile stops reading at the per-file budget, whatever Stat said.
type cappedFile struct {
	fs.File
	r io.Reader
}

// Read implements io.Reader.
func (c *cappedFile) Read(b []byte) (int, error) { return c.r.Read(b) }

// Sub returns the canonical path of dir joined with rel, where rel is a path
// a user wrote in a manifest or option (a values file, a base, a library).
// It refuses absolute paths and URLs (anything with a scheme), and any rel
// that leaves the root once resolved.
func (r *Root) Sub(dir, rel string) (string, error) {
	if scheme := URLScheme(rel); scheme != "" {
		return "", &PathError{Op: "resolve", Path: rel, Err: fmt.Errorf("%w: %q", ErrSchemeNotAllowed, scheme)}
	}
	if strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, `\`) || hasDriveLetter(rel) {
		return "", &PathError{Op: "resolve", Path: rel, Err: ErrAbsolutePath}
	}
	return r.Resolve(path.Join(dir, rel))
}

// URLScheme returns the scheme of s when s looks like a URL ("https" for
// "https://x", "file" for "file:///etc"), else "". Windows drive letters are
// not schemes.
func URLScheme(s string) string {
	i := strings.Index(s, ":")
	if i <= 1 {
		return ""
	}
	for j, c := range s[:i] {
		alpha := (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !alpha && (j == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return ""
		}
	}
	return strings.ToLower(s[:i])
}

// unwrapFS drops the *fs.PathError an FS wraps its errors in, so that our
// own PathError names the path once, as requested.
func unwrapFS(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
