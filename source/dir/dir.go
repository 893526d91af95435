package dir

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/internal/treefs"
)

// Options bound what a folder may hold. Start from DefaultOptions.
type Options struct {
	// MaxBytes caps the total size of the files read. Default 256 MiB.
	MaxBytes int64
	// MaxFiles caps the number of files and links. Default 100,000.
	MaxFiles int
}

// DefaultOptions returns 256 MiB and 100,000 files.
func DefaultOptions() Options {
	return Options{MaxBytes: 256 << 20, MaxFiles: 100_000}
}

// Source reads local folders. Repository.URL is a folder path or a
// file:// URL; credentials are ignored. It is safe for concurrent use.
type Source struct {
	opts Options

	mu   sync.Mutex
	last map[string]*built // by revision, the few most recent builds
}

var _ source.Source = (*Source)(nil)

// New returns a Source; zero options take their defaults.
func New(opts Options) *Source {
	def := DefaultOptions()
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = def.MaxBytes
	}
	if opts.MaxFiles <= 0 {
		opts.MaxFiles = def.MaxFiles
	}
	return &Source{opts: opts, last: map[string]*built{}}
}

// built is a folder turned into Git objects in memory.
type built struct {
	objects *memory.Storage
	root    plumbing.Hash
	rev     string
}

// maxRemembered bounds the builds kept between Resolve and Snapshot.
const maxRemembered = 8

// Resolve reads the folder and returns its content hash. revision must be
// "", "HEAD", or a content hash the folder still has.
func (s *Source) Resolve(ctx context.Context, repo source.Repository, revision string) (source.Revision, error) {
	b, err := s.build(ctx, repo)
	if err != nil {
		return source.Revision{}, &source.Error{Repository: repo.String(), Op: "resolve", Revision: revision, Err: err}
	}
	if revision != "" && revision != "HEAD" && revision != b.rev {
		return source.Revision{}, &source.Error{Repository: repo.String(), Op: "resolve", Revision: revision,
			Err: fmt.Errorf("the folder's content is %s: %w", b.rev, source.ErrRevisionNotFound)}
	}
	return source.Revision{Commit: b.rev}, nil
}

// Snapshot returns the folder's content as of rev, held in memory. It fails
// with source.ErrRevisionNotFound when the folder changed since rev.
func (s *Source) Snapshot(ctx context.Context, repo source.Repository, rev source.Revision) (source.Snapshot, error) {
	s.mu.Lock()
	b, ok := s.last[rev.Commit]
	s.mu.Unlock()
	if !ok {
		var err error
		if b, err = s.build(ctx, repo); err != nil {
			return nil, &source.Error{Repository: repo.String(), Op: "snapshot", Revision: rev.Commit, Err: err}
		}
		if b.rev != rev.Commit {
			return nil, &source.Error{Repository: repo.String(), Op: "snapshot", Revision: rev.Commit,
				Err: fmt.Errorf("the folder changed since it was resolved (now %s): %w", b.rev, source.ErrRevisionNotFound)}
		}
	}
	return &Snapshot{FS: treefs.New(b.objects, b.root), rev: rev}, nil
}

// Snapshot is a folder's content at one revision, in memory. It implements
// source.Snapshot, fs.ReadDirFS, fs.ReadFileFS, fs.StatFS and fs.ReadLinkFS.
type Snapshot struct {
	*treefs.FS
	rev source.Revision
}

// Revision implements source.Snapshot.
func (s *Snapshot) Revision() source.Revision { return s.rev }

// folderOf turns a Repository URL into a folder path.
func folderOf(repo source.Repository) (string, error) {
	p := repo.URL
	if strings.HasPrefix(p, "file://") {
		u, err := url.Parse(p)
		if err != nil {
			return "", fmt.Errorf("unparsable file URL: %w", source.ErrInvalidRepository)
		}
		p = u.Path
	}
	if p == "" {
		return "", fmt.Errorf("empty folder path: %w", source.ErrInvalidRepository)
	}
	info, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("%w: %w", source.ErrRepositoryNotFound, err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("%s is not a folder: %w", p, source.ErrInvalidRepository)
	}
	return p, nil
}

func (s *Source) build(ctx context.Context, repo source.Repository) (*built, error) {
	folder, err := folderOf(repo)
	if err != nil {
		return nil, err
	}
	w := &walker{ctx: ctx, opts: s.opts, objects: memory.NewStorage(), root: folder}
	root, empty, err := w.tree(folder)
	if err != nil {
		return nil, err
	}
	if empty {
		if root, err = w.store(&object.Tree{}); err != nil {
			return nil, err
		}
	}
	sum := sha256.Sum256([]byte("gitops-dir-v1\n" + root.String()))
	b := &built{objects: w.objects, root: root, rev: "sha256:" + hex.EncodeToString(sum[:])}
	s.mu.Lock()
	if len(s.last) >= maxRemembered {
		for k := range s.last {
			delete(s.last, k)
			break
		}
	}
	s.last[b.rev] = b
	s.mu.Unlock()
	return b, nil
}

// walker builds Git objects for one folder.
type walker struct {
	ctx     context.Context
	opts    Options
	objects *memory.Storage
	root    string
	bytes   int64
	files   int
}

// tree stores the tree of dir and returns its id; empty reports a
// directory with no files below it (Git leaves those out).
func (w *walker) tree(dir string) (plumbing.Hash, bool, error) {
	if err := w.ctx.Err(); err != nil {
		return plumbing.ZeroHash, false, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return plumbing.ZeroHash, false, w.fileErr(dir, err)
	}
	var t object.Tree
	for _, e := range entries {
		full := filepath.Join(dir, e.Name())
		switch typ := e.Type(); {
		case e.Name() == ".git":
			continue
		case typ.IsDir():
			h, empty, err := w.tree(full)
			if err != nil {
				return plumbing.ZeroHash, false, err
			}
			if !empty {
				t.Entries = append(t.Entries, object.TreeEntry{Name: e.Name(), Mode: filemode.Dir, Hash: h})
			}
		case typ&os.ModeSymlink != 0:
			target, err := os.Readlink(full)
			if err != nil {
				return plumbing.ZeroHash, false, w.fileErr(full, err)
			}
			h, err := w.blob(full, []byte(filepath.ToSlash(target)))
			if err != nil {
				return plumbing.ZeroHash, false, err
			}
			t.Entries = append(t.Entries, object.TreeEntry{Name: e.Name(), Mode: filemode.Symlink, Hash: h})
		case typ.IsRegular():
			info, err := e.Info()
			if err != nil {
				return plumbing.ZeroHash, false, w.fileErr(full, err)
			}
			if w.bytes+info.Size() > w.opts.MaxBytes {
				return plumbing.ZeroHash, false, w.fileErr(full, fmt.Errorf("folder holds more than %d bytes: %w", w.opts.MaxBytes, resource.ErrTooLarge))
			}
			data, err := os.ReadFile(full)
			if err != nil {
				return plumbing.ZeroHash, false, w.fileErr(full, err)
			}
			h, err := w.blob(full, data)
			if err != nil {
				return plumbing.ZeroHash, false, err
			}
			mode := filemode.Regular
			if info.Mode()&0o111 != 0 {
				mode = filemode.Executable
			}
			t.Entries = append(t.Entries, object.TreeEntry{Name: e.Name(), Mode: mode, Hash: h})
		default:
			return plumbing.ZeroHash, false, w.fileErr(full, fmt.Errorf("unsupported file type %v", typ))
		}
	}
	if len(t.Entries) == 0 {
		return plumbing.ZeroHash, true, nil
	}
	sortGit(t.Entries)
	h, err := w.store(&t)
	return h, false, err
}

func (w *walker) blob(path string, data []byte) (plumbing.Hash, error) {
	w.files++
	w.bytes += int64(len(data))
	if w.files > w.opts.MaxFiles {
		return plumbing.ZeroHash, w.fileErr(path, fmt.Errorf("folder holds more than %d files: %w", w.opts.MaxFiles, resource.ErrTooLarge))
	}
	obj := w.objects.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(data)))
	wr, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := wr.Write(data); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := wr.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return w.objects.SetEncodedObject(obj)
}

func (w *walker) store(t *object.Tree) (plumbing.Hash, error) {
	obj := w.objects.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return w.objects.SetEncodedObject(obj)
}

// fileErr names the file relative to the folder, as a *fs.PathError.
func (w *walker) fileErr(path string, err error) error {
	rel, rerr := filepath.Rel(w.root, path)
	if rerr != nil {
		rel = path
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &os.PathError{Op: "read", Path: filepath.ToSlash(rel), Err: err}
}

// sortGit orders entries as Git does: by name, a directory comparing as if
// its name ended in "/".
func sortGit(entries []object.TreeEntry) {
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
}
