package render

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sync"
	"sync/atomic"
)

// maxDecryptBytes is the largest file handed to the decryptor; SOPS
// documents are small, and a larger file is read as it is.
const maxDecryptBytes = 8 << 20

// decryptFS is the tree a Decrypting renderer hands the tool: regular files
// read as the decryptor's plaintext; everything else passes through. It
// implements the optional interfaces Root uses.
type decryptFS struct {
	fsys fs.FS
	d    Decryptor
	ctx  context.Context
	// must are tree paths that have to be encrypted (helm-secrets value
	// files).
	must map[string]bool

	decrypted atomic.Bool
	mu        sync.Mutex
	first     error
}

func (f *decryptFS) failure() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.first
}

func (f *decryptFS) fail(name string, err error) error {
	derr := &DecryptError{Path: name, Err: err}
	f.mu.Lock()
	if f.first == nil {
		f.first = derr
	}
	f.mu.Unlock()
	return derr
}

// content returns what the tool sees of the file name with content data.
func (f *decryptFS) content(name string, data []byte) ([]byte, error) {
	plain, encrypted, err := f.d.Decrypt(f.ctx, name, data)
	if err != nil {
		return nil, f.fail(name, err)
	}
	if !encrypted {
		if f.must[path.Clean(name)] {
			return nil, f.fail(name, fmt.Errorf("named with %s but not encrypted", HelmSecretsPrefix))
		}
		return data, nil
	}
	f.decrypted.Store(true)
	return plain, nil
}

// Open implements fs.FS; a regular file is read whole and decrypted.
func (f *decryptFS) Open(name string) (fs.File, error) {
	file, err := f.fsys.Open(name)
	if err != nil {
		return nil, err
	}
	info, err := file.Stat()
	if err != nil || !info.Mode().IsRegular() || info.Size() > maxDecryptBytes {
		// Directories pass through, and so do files too large to be a
		// SOPS document: Root's budgets apply to them as to any file.
		return file, err
	}
	data, err := io.ReadAll(file)
	file.Close()
	if err != nil {
		return nil, err
	}
	out, err := f.content(name, data)
	if err != nil {
		return nil, err
	}
	return &memFile{Reader: bytes.NewReader(out), info: sizedInfo{info, int64(len(out))}}, nil
}

// ReadFile implements fs.ReadFileFS.
func (f *decryptFS) ReadFile(name string) ([]byte, error) {
	data, err := fs.ReadFile(f.fsys, name)
	if err != nil || len(data) > maxDecryptBytes {
		return data, err
	}
	return f.content(name, data)
}

// ReadDir implements fs.ReadDirFS.
func (f *decryptFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(f.fsys, name) }

// Stat implements fs.StatFS.
func (f *decryptFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(f.fsys, name) }

// Lstat passes through, so that Root sees symbolic links.
func (f *decryptFS) Lstat(name string) (fs.FileInfo, error) { return fs.Lstat(f.fsys, name) }

// ReadLink passes through, so that Root sees symbolic links.
func (f *decryptFS) ReadLink(name string) (string, error) { return fs.ReadLink(f.fsys, name) }

// TreeHash passes through: the hash is of the ciphertext.
func (f *decryptFS) TreeHash(name string) (string, error) { return TreeHash(f.fsys, name) }

// memFile is a decrypted file.
type memFile struct {
	*bytes.Reader
	info fs.FileInfo
}

// Stat implements fs.File.
func (m *memFile) Stat() (fs.FileInfo, error) { return m.info, nil }

// Close implements fs.File: nothing to release.
func (m *memFile) Close() error { return nil }

// sizedInfo reports the plaintext's size.
type sizedInfo struct {
	fs.FileInfo
	size int64
}

// Size is the decrypted size.
func (s sizedInfo) Size() int64 { return s.size }
