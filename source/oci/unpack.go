package oci

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// entryError is an extraction error about one entry (or none).
type entryError struct {
	entry string
	err   error
}

// Error is the extraction error's own text.
func (e *entryError) Error() string { return e.err.Error() }

// Unwrap returns the extraction error.
func (e *entryError) Unwrap() error { return e.err }

// extract reads a content layer (a tar, gzipped when gzipped is set) into
// memory within limits. With stripTop (a Helm chart's layer) every entry
// must sit under one top directory, which is left out. Only files and
// directories are allowed, no path that is absolute or climbs out, no
// links; past a limit the layer is refused, never truncated.
func extract(r io.Reader, gzipped, stripTop bool, limits Limits) (map[string][]byte, error) {
	fail := func(entry string, err error) error { return &entryError{entry: entry, err: err} }
	if gzipped {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fail("", fmt.Errorf("%w: the content layer is not gzipped", ErrUnsafeArtifact))
		}
		defer zr.Close()
		r = zr
	}
	// The decompressed stream is bounded as a whole (tar headers and
	// padding included), so a gzip bomb stops at the limit.
	budget := limits.MaxTotalBytes + int64(limits.MaxFiles+2)*1024
	lr := &io.LimitedReader{R: r, N: budget}
	tooLarge := fmt.Errorf("%w: extracts to more than %d bytes", ErrArtifactTooLarge, limits.MaxTotalBytes)
	tr := tar.NewReader(lr)
	files := map[string][]byte{}
	top := ""
	var total int64
	for entries := 0; ; entries++ {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if lr.N <= 0 {
				return nil, fail("", tooLarge)
			}
			return nil, fail("", fmt.Errorf("%w: unreadable tar: %v", ErrUnsafeArtifact, err))
		}
		if entries >= limits.MaxFiles {
			return nil, fail("", fmt.Errorf("%w: more than %d entries", ErrArtifactTooLarge, limits.MaxFiles))
		}
		name, err := entryPath(hdr.Name)
		if err != nil {
			return nil, fail(hdr.Name, err)
		}
		if stripTop {
			first, rest, _ := strings.Cut(name, "/")
			if top == "" {
				top = first
			} else if first != top {
				return nil, fail(hdr.Name, fmt.Errorf("%w: a chart's entries must sit under one directory", ErrUnsafeArtifact))
			}
			name = rest
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg, tar.TypeRegA:
		case tar.TypeSymlink, tar.TypeLink:
			return nil, fail(hdr.Name, fmt.Errorf("%w: links are not allowed", ErrUnsafeArtifact))
		default:
			return nil, fail(hdr.Name, fmt.Errorf("%w: entry type %q is not a file", ErrUnsafeArtifact, hdr.Typeflag))
		}
		if name == "" {
			continue // the chart's top directory as a file: Helm ignores it too
		}
		if hdr.Size > limits.MaxFileBytes {
			return nil, fail(hdr.Name, fmt.Errorf("%w: %d bytes, more than %d", ErrArtifactTooLarge, hdr.Size, limits.MaxFileBytes))
		}
		if total+hdr.Size > limits.MaxTotalBytes {
			return nil, fail(hdr.Name, tooLarge)
		}
		body := make([]byte, hdr.Size) // bounded by MaxFileBytes above
		if _, err := io.ReadFull(tr, body); err != nil {
			if lr.N <= 0 {
				return nil, fail(hdr.Name, tooLarge)
			}
			return nil, fail(hdr.Name, fmt.Errorf("%w: %v", ErrUnsafeArtifact, err))
		}
		total += int64(len(body))
		if _, dup := files[name]; dup {
			return nil, fail(hdr.Name, fmt.Errorf("%w: duplicate entry", ErrUnsafeArtifact))
		}
		files[name] = body
	}
	return files, nil
}

// entryPath checks one tar entry name and returns it canonical: a leading
// "./" (tar's own way to name the root's entries) and a trailing "/" are
// dropped; absolute names, backslashes and ".." elements are refused.
func entryPath(raw string) (string, error) {
	name := strings.TrimSuffix(strings.TrimPrefix(raw, "./"), "/")
	switch {
	case raw == "./" || raw == ".":
		return "", nil
	case name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, `\`) || (len(name) > 1 && name[1] == ':'):
		return "", fmt.Errorf("%w: absolute or malformed path", ErrUnsafeArtifact)
	case path.Clean(name) != name:
		return "", fmt.Errorf("%w: path is not canonical", ErrUnsafeArtifact)
	}
	for _, elem := range strings.Split(name, "/") {
		if elem == ".." || elem == "." {
			return "", fmt.Errorf("%w: path leaves the artifact", ErrUnsafeArtifact)
		}
	}
	return name, nil
}
