package appset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	gosync "sync"

	"github.com/kubegitops/gitops/source"
	"sigs.k8s.io/yaml"
)

// maxConfigBytes bounds one git files config file.
const maxConfigBytes = 1 << 20

// git yields a set per matching directory or config file of the
// repository at the generator's revision.
func (c *genCtx) git(ctx context.Context, g *GitGenerator) ([]Params, error) {
	if c.r.opts.Repos == nil {
		return nil, fmt.Errorf("%w: no repositories configured for git generators", ErrNoProvider)
	}
	snap, err := c.r.opts.Repos.Snapshot(ctx, g.RepoURL, g.Revision)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source.RedactURL(g.RepoURL), err)
	}
	if cl, ok := snap.(source.Closer); ok {
		defer cl.Close()
	}
	var ps []Params
	if len(g.Directories) > 0 {
		ps, err = c.gitDirectories(ctx, snap, g)
	} else {
		ps, err = c.gitFiles(ctx, snap, g)
	}
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", source.RedactURL(g.RepoURL), snap.Revision().Commit, err)
	}
	for _, p := range ps {
		if err := c.addValues(p, g.Values); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

// gitDirectories yields the directories matching an include item and no
// exclude item (path.Match patterns; hidden directories are skipped).
func (c *genCtx) gitDirectories(ctx context.Context, snap source.Snapshot, g *GitGenerator) ([]Params, error) {
	var out []Params
	err := fs.WalkDir(snap, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() || p == "." {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			return fs.SkipDir
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		included := false
		for _, it := range g.Directories {
			if ok, _ := path.Match(it.Path, p); ok {
				if it.Exclude {
					return nil
				}
				included = true
			}
		}
		if !included {
			return nil
		}
		if len(out) >= c.r.opts.MaxApplications {
			return fmt.Errorf("%w: directories match more than %d", ErrTooMany, c.r.opts.MaxApplications)
		}
		pp := Params{}
		pathParams(pp, p, "", g.PathParamPrefix, c.tmpl.goTemplate)
		out = append(out, pp)
		return nil
	})
	return out, err
}

// gitFiles yields the parameter sets of the config files matching an
// include item and no exclude item ("**" matches any number of folders,
// other patterns as path.Match). A file holding a list yields one set per
// element. At most Options.MaxFiles files may match.
func (c *genCtx) gitFiles(ctx context.Context, snap source.Snapshot, g *GitGenerator) ([]Params, error) {
	var files []string
	for _, it := range g.Files {
		if it.Exclude {
			continue
		}
		root := staticPrefix(it.Path)
		err := fs.WalkDir(snap, root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && p == root {
					return fs.SkipAll
				}
				return err
			}
			if d.IsDir() {
				return nil
			}
			if !matchGlob(it.Path, p) {
				return nil
			}
			for _, ex := range g.Files {
				if ex.Exclude && matchGlob(ex.Path, p) {
					return nil
				}
			}
			files = append(files, p)
			if len(files) > c.r.opts.MaxFiles {
				return fmt.Errorf("%w: files pattern %q matches more than %d files", ErrTooMany, it.Path, c.r.opts.MaxFiles)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	var out []Params
	seen := map[string]bool{}
	for _, f := range files {
		if seen[f] {
			continue
		}
		seen[f] = true
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ps, err := c.r.files.params(snap, f, g.PathParamPrefix, c.tmpl.goTemplate)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, p := range ps {
			out = append(out, cloneParams(p))
		}
		if len(out) > c.r.opts.MaxApplications {
			return nil, fmt.Errorf("%w: files yield more than %d parameter sets", ErrTooMany, c.r.opts.MaxApplications)
		}
	}
	return out, nil
}

// staticPrefix is the folder part of a pattern before its first
// wildcard ("." when there is none).
func staticPrefix(pattern string) string {
	i := strings.IndexAny(pattern, "*?[\\{")
	if i < 0 {
		return path.Dir(pattern)
	}
	j := strings.LastIndexByte(pattern[:i], '/')
	if j <= 0 {
		return "."
	}
	return pattern[:j]
}

// matchGlob matches a slash-separated name against a pattern whose "**"
// segments match any number of segments and whose other segments are
// path.Match patterns.
func matchGlob(pattern, name string) bool {
	return matchSegments(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchSegments(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// fileCache keeps the parameter sets of config files by content (the
// file's tree hash), so that a new commit re-parses only changed files.
type fileCache struct {
	mu gosync.Mutex
	m  map[fileKey][]Params
}

type fileKey struct {
	hash, path, prefix string
	goTemplate         bool
}

// maxCachedFiles bounds the cache; past it, it starts afresh.
const maxCachedFiles = 100_000

func newFileCache() *fileCache { return &fileCache{m: map[fileKey][]Params{}} }

// params returns the sets of one config file; callers must not modify
// them (clone first).
func (fc *fileCache) params(snap source.Snapshot, file, prefix string, goTemplate bool) ([]Params, error) {
	hash, herr := snap.TreeHash(file)
	key := fileKey{hash: hash, path: file, prefix: prefix, goTemplate: goTemplate}
	if herr == nil {
		fc.mu.Lock()
		ps, ok := fc.m[key]
		fc.mu.Unlock()
		if ok {
			return ps, nil
		}
	}
	ps, err := parseConfig(snap, file, prefix, goTemplate)
	if err != nil {
		return nil, err
	}
	if herr == nil {
		fc.mu.Lock()
		if len(fc.m) >= maxCachedFiles {
			fc.m = map[fileKey][]Params{}
		}
		fc.m[key] = ps
		fc.mu.Unlock()
	}
	return ps, nil
}

func parseConfig(fsys fs.FS, file, prefix string, goTemplate bool) ([]Params, error) {
	f, err := fsys.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, maxConfigBytes+1)); err != nil {
		return nil, err
	}
	if buf.Len() > maxConfigBytes {
		return nil, fmt.Errorf("config file over %d bytes", maxConfigBytes)
	}
	js, err := yaml.YAMLToJSON(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("not JSON or YAML: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var objs []map[string]any
	switch t := v.(type) {
	case map[string]any:
		objs = append(objs, t)
	case []any:
		for i, el := range t {
			m, ok := el.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("element %d is not an object", i)
			}
			objs = append(objs, m)
		}
	case nil:
		return nil, nil
	default:
		return nil, fmt.Errorf("want an object or a list of objects")
	}
	dir, name := path.Split(file)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		dir = "."
	}
	out := make([]Params, 0, len(objs))
	for _, o := range objs {
		p := Params{}
		if goTemplate {
			for k, v := range o {
				p[k] = numbersToNative(v)
			}
		} else {
			flatten(p, "", o)
		}
		pathParams(p, dir, name, prefix, goTemplate)
		out = append(out, p)
	}
	return out, nil
}

// numbersToNative turns json.Number into int64 or float64 for templates.
func numbersToNative(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	case map[string]any:
		for k, c := range t {
			t[k] = numbersToNative(c)
		}
	case []any:
		for i, c := range t {
			t[i] = numbersToNative(c)
		}
	}
	return v
}
