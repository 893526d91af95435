package helmrepo

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// unpack reads a chart archive (a gzipped tar whose entries sit under one
// top directory, the chart's name) into memory, without that top
// directory, within limits. The rules are those of the package doc: only
// files and directories, no path that is absolute or leaves the chart,
// no links; past a limit the archive is refused, never truncated.
func unpack(chart, version string, data []byte, limits Limits) (map[string][]byte, error) {
	fail := func(entry string, err error) error {
		return &ArchiveError{Chart: chart, Version: version, Entry: entry, Err: err}
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fail("", fmt.Errorf("%w: not a gzip archive", ErrUnsafeArchive))
	}
	defer zr.Close()
	// The decompressed stream is bounded as a whole (tar headers and
	// padding included), so a gzip bomb stops at the limit.
	budget := limits.MaxTotalBytes + int64(limits.MaxFiles+2)*1024
	lr := &io.LimitedReader{R: zr, N: budget}
	tr := tar.NewReader(lr)
	files := map[string][]byte{}
	var total int64
	for entries := 0; ; entries++ {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if lr.N <= 0 {
				return nil, fail("", fmt.Errorf("%w: expands past %d bytes", ErrArchiveTooLarge, limits.MaxTotalBytes))
			}
			return nil, fail("", fmt.Errorf("%w: unreadable tar: %v", ErrUnsafeArchive, err))
		}
		if entries >= limits.MaxFiles {
			return nil, fail("", fmt.Errorf("%w: more than %d entries", ErrArchiveTooLarge, limits.MaxFiles))
		}
		name, err := entryPath(hdr.Name)
		if err != nil {
			return nil, fail(hdr.Name, err)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg, tar.TypeRegA:
		case tar.TypeSymlink, tar.TypeLink:
			return nil, fail(hdr.Name, fmt.Errorf("%w: links are not allowed in charts", ErrUnsafeArchive))
		default:
			return nil, fail(hdr.Name, fmt.Errorf("%w: entry type %q is not a file", ErrUnsafeArchive, hdr.Typeflag))
		}
		if name == "" {
			continue // the top directory itself as a file: Helm ignores it too
		}
		if hdr.Size > limits.MaxFileBytes {
			return nil, fail(hdr.Name, fmt.Errorf("%w: %d bytes, more than %d", ErrArchiveTooLarge, hdr.Size, limits.MaxFileBytes))
		}
		if total+hdr.Size > limits.MaxTotalBytes {
			return nil, fail(hdr.Name, fmt.Errorf("%w: expands past %d bytes", ErrArchiveTooLarge, limits.MaxTotalBytes))
		}
		body := make([]byte, hdr.Size) // bounded by MaxFileBytes above
		if _, err := io.ReadFull(tr, body); err != nil {
			if lr.N <= 0 {
				return nil, fail(hdr.Name, fmt.Errorf("%w: expands past %d bytes", ErrArchiveTooLarge, limits.MaxTotalBytes))
			}
			return nil, fail(hdr.Name, fmt.Errorf("%w: %v", ErrUnsafeArchive, err))
		}
		total += int64(len(body))
		if _, dup := files[name]; dup {
			return nil, fail(hdr.Name, fmt.Errorf("%w: duplicate entry", ErrUnsafeArchive))
		}
		files[name] = body
	}
	if _, ok := files["Chart.yaml"]; !ok {
		return nil, fail("", fmt.Errorf("%w: no Chart.yaml at the top of the chart", ErrUnsafeArchive))
	}
	return files, nil
}

// entryPath checks one tar entry name and returns it without its first
// element (the chart's directory). Absolute names, backslashes, ".."
// elements and names that are not canonical are refused.
func entryPath(raw string) (string, error) {
	name := strings.TrimSuffix(raw, "/")
	switch {
	case name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, `\`) || (len(name) > 1 && name[1] == ':'):
		return "", fmt.Errorf("%w: absolute or malformed path", ErrUnsafeArchive)
	case path.Clean(name) != name:
		return "", fmt.Errorf("%w: path is not canonical", ErrUnsafeArchive)
	}
	for _, elem := range strings.Split(name, "/") {
		if elem == ".." || elem == "." {
			return "", fmt.Errorf("%w: path leaves the chart", ErrUnsafeArchive)
		}
	}
	_, rest, _ := strings.Cut(name, "/")
	return rest, nil
}
