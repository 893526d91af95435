package jsonnet

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"strings"

	gojsonnet "github.com/google/go-jsonnet"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/resource"
)

// Options configure the Jsonnet renderer.
type Options struct {
	// Limits bound the files read and the decoding of the output.
	Limits render.Limits
	// MaxStackDepth bounds recursion. Default 500 (go-jsonnet's default).
	MaxStackDepth int
}

// DefaultOptions returns the default limits.
func DefaultOptions() Options {
	return Options{Limits: render.DefaultLimits(), MaxStackDepth: 500}
}

// Renderer renders Jsonnet applications.
type Renderer struct{ opts Options }

// New returns a Jsonnet Renderer.
func New(opts Options) *Renderer {
	opts.Limits = opts.Limits.WithDefaults()
	if opts.MaxStackDepth <= 0 {
		opts.MaxStackDepth = 500
	}
	return &Renderer{opts: opts}
}

// Identity implements render.Identifier.
func (r *Renderer) Identity(render.Input) (render.Identity, error) {
	return render.Identity{Tool: render.KindJsonnet, Version: render.LibraryVersion("github.com/google/go-jsonnet"), Options: r.opts}, nil
}

// Render implements render.Renderer.
func (r *Renderer) Render(ctx context.Context, in render.Input) ([]*unstructured.Unstructured, error) {
	type result struct {
		objs []*unstructured.Unstructured
		err  error
	}
	done := make(chan result, 1)
	go func() {
		objs, err := r.render(ctx, in)
		done <- result{objs, err}
	}()
	select {
	case res := <-done:
		return res.objs, render.Wrap(render.KindJsonnet, in, res.err)
	case <-ctx.Done():
		return nil, render.Wrap(render.KindJsonnet, in, ctx.Err())
	}
}

func (r *Renderer) render(ctx context.Context, in render.Input) ([]*unstructured.Unstructured, error) {
	src := render.JsonnetSource{}
	if in.Jsonnet != nil {
		src = *in.Jsonnet
	}
	root := render.NewRoot(in.FS, r.opts.Limits)
	dir, err := root.Resolve(in.Path)
	if err != nil {
		return nil, err
	}
	libs := make([]string, 0, len(src.Libs))
	for _, l := range src.Libs {
		p, err := root.Sub(".", l)
		if err != nil {
			return nil, err
		}
		libs = append(libs, p)
	}
	recurse := in.Directory != nil && in.Directory.Recurse
	files, err := mainFiles(ctx, root, dir, recurse, in.Directory)
	if err != nil {
		return nil, err
	}
	imp := newImporter(root, libs)
	var out []*unstructured.Unstructured
	for _, f := range files {
		vm := gojsonnet.MakeVM()
		vm.Importer(imp)
		vm.MaxStack = r.opts.MaxStackDepth
		for _, v := range src.ExtVars {
			if v.Code {
				vm.ExtCode(v.Name, v.Value)
			} else {
				vm.ExtVar(v.Name, v.Value)
			}
		}
		for _, v := range src.TLAs {
			if v.Code {
				vm.TLACode(v.Name, v.Value)
			} else {
				vm.TLAVar(v.Name, v.Value)
			}
		}
		// The importer reads the main file too (importedFrom ""), so that
		// its imports resolve relative to it.
		js, err := vm.EvaluateFile(f)
		if refused := imp.refusal(); refused != nil {
			return nil, fmt.Errorf("evaluate %s: %w", f, refused)
		}
		if err != nil {
			return nil, fmt.Errorf("evaluate %s: %w", f, err)
		}
		if int64(len(js)) > r.opts.Limits.Decode.MaxStreamBytes && r.opts.Limits.Decode.MaxStreamBytes > 0 {
			return nil, &render.PathError{Op: "evaluate", Path: f, Err: fmt.Errorf("%w: output of %d bytes", render.ErrTooLarge, len(js))}
		}
		objs, err := decodeOutput(f, []byte(js), r.opts.Limits.Decode)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// mainFiles lists the *.jsonnet files to evaluate.
func mainFiles(ctx context.Context, root *render.Root, dir string, recurse bool, d *render.DirectorySource) ([]string, error) {
	var files []string
	err := root.Walk(ctx, dir, render.WalkOptions{Once: true}, func(relName string, info fs.FileInfo, err error) error {
		name := path.Base(relName)
		if strings.HasPrefix(name, ".") {
			if info != nil && info.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if err != nil {
			if !recurse && path.Ext(name) != ".jsonnet" {
				return nil // a link that is neither a main file nor walked
			}
			return err
		}
		if info.IsDir() {
			if !recurse {
				return fs.SkipDir
			}
			return nil
		}
		if path.Ext(name) != ".jsonnet" {
			return nil
		}
		if d != nil && d.Include != "" && !render.MatchGlob(d.Include, relName) {
			return nil
		}
		if d != nil && d.Exclude != "" && render.MatchGlob(d.Exclude, relName) {
			return nil
		}
		files = append(files, path.Join(dir, relName))
		return nil
	})
	return files, err
}

// decodeOutput flattens arrays and decodes each object with the limits of
// resource.Decode.
func decodeOutput(name string, js []byte, opts resource.DecodeOptions) ([]*unstructured.Unstructured, error) {
	var v any
	if err := json.Unmarshal(js, &v); err != nil {
		return nil, fmt.Errorf("%s: output is not JSON: %w", name, err)
	}
	var docs []any
	var flatten func(v any)
	flatten = func(v any) {
		if a, ok := v.([]any); ok {
			for _, e := range a {
				flatten(e)
			}
			return
		}
		docs = append(docs, v)
	}
	flatten(v)
	var out []*unstructured.Unstructured
	for _, d := range docs {
		b, err := json.Marshal(d)
		if err != nil {
			return nil, err
		}
		objs, err := resource.Decode(name, b, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}
