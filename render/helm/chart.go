package helm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/ignore"

	"github.com/kubegitops/gitops/render"
)

// loadChart reads the chart at dir through root, honouring .helmignore,
// and loads it with Helm's loader. It also returns the files read, so that
// fetched dependencies can be added to them.
func loadChart(ctx context.Context, root *render.Root, dir string) (*chart.Chart, []*loader.BufferedFile, error) {
	rules := ignore.Empty()
	if data, err := root.ReadFile(path.Join(dir, ignore.HelmIgnore)); err == nil {
		if rules, err = ignore.Parse(bytes.NewReader(data)); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path.Join(dir, ignore.HelmIgnore), err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	rules.AddDefaults()
	var files []*loader.BufferedFile
	err := root.Walk(ctx, dir, render.WalkOptions{}, func(name string, info fs.FileInfo, err error) error {
		if err != nil {
			return err // a link that leaves the root, or a broken one
		}
		if rules.Ignore(name, info) {
			if info.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if info.IsDir() {
			return nil
		}
		full := path.Join(dir, name)
		data, err := root.ReadFile(full)
		if err != nil {
			return err
		}
		if strings.HasPrefix(name, "charts/") && strings.HasSuffix(name, ".tgz") {
			if err := checkArchive(full, data, root.Limits()); err != nil {
				return err
			}
		}
		files = append(files, &loader.BufferedFile{Name: name, Data: data})
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	c, err := loader.LoadFiles(files)
	if err != nil {
		return nil, nil, fmt.Errorf("load chart %s: %w", dir, err)
	}
	return c, files, nil
}

// checkArchive decompresses a chart archive once, counting, so that an
// archive that expands past the render's budgets (a gzip bomb, or
// thousands of tiny files) fails before Helm loads it into memory.
func checkArchive(name string, data []byte, limits render.Limits) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return &render.PathError{Op: "gunzip", Path: name, Err: err}
	}
	defer zr.Close()
	tr := tar.NewReader(io.LimitReader(zr, limits.MaxTotalBytes+1))
	var total int64
	for n := 0; ; n++ {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if total >= limits.MaxTotalBytes {
				break
			}
			return &render.PathError{Op: "untar", Path: name, Err: err}
		}
		if n >= limits.MaxFiles {
			return &render.PathError{Op: "untar", Path: name, Err: fmt.Errorf("%w: more than %d entries", render.ErrTooManyFiles, limits.MaxFiles)}
		}
		if hdr.Size > limits.MaxFileBytes {
			return &render.PathError{Op: "untar", Path: name, Err: fmt.Errorf("%w: entry of %d bytes", render.ErrTooLarge, hdr.Size)}
		}
		written, err := io.Copy(io.Discard, tr)
		total += written
		if total > limits.MaxTotalBytes {
			break
		}
		if err != nil {
			return &render.PathError{Op: "untar", Path: name, Err: err}
		}
	}
	return &render.PathError{Op: "untar", Path: name, Err: fmt.Errorf("%w: expands past %d bytes", render.ErrTooLarge, limits.MaxTotalBytes)}
}
