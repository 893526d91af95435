package plain

import (
	"context"
	"io/fs"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/resource"
)

// Options configure the plain renderer.
type Options struct {
	// Limits bound the files read and their decoding.
	Limits render.Limits
}

// DefaultOptions returns the default limits.
func DefaultOptions() Options { return Options{Limits: render.DefaultLimits()} }

// Renderer renders plain directories.
type Renderer struct{ opts Options }

// New returns a plain Renderer.
func New(opts Options) *Renderer {
	opts.Limits = opts.Limits.WithDefaults()
	return &Renderer{opts: opts}
}

// Identity implements render.Identifier.
func (r *Renderer) Identity(render.Input) (render.Identity, error) {
	return render.Identity{Tool: render.KindPlain, Version: render.LibraryVersion("sigs.k8s.io/yaml"), Options: r.opts}, nil
}

// Render implements render.Renderer.
func (r *Renderer) Render(ctx context.Context, in render.Input) ([]*unstructured.Unstructured, error) {
	root := render.NewRoot(in.FS, r.opts.Limits)
	objs, err := r.render(ctx, root, in)
	return objs, render.Wrap(render.KindPlain, in, err)
}

func (r *Renderer) render(ctx context.Context, root *render.Root, in render.Input) ([]*unstructured.Unstructured, error) {
	var dir render.DirectorySource
	if in.Directory != nil {
		dir = *in.Directory
	}
	app, err := root.Resolve(in.Path)
	if err != nil {
		return nil, err
	}
	var files []string
	// Each directory once, however many links reach it: a manifest is
	// read once.
	err = root.Walk(ctx, app, render.WalkOptions{Once: true}, func(relName string, info fs.FileInfo, err error) error {
		name := path.Base(relName)
		if strings.HasPrefix(name, ".") {
			if info != nil && info.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if err != nil {
			return err // a link that leaves the root, or a broken one
		}
		if info.IsDir() {
			if !dir.Recurse {
				return fs.SkipDir
			}
			return nil
		}
		if !isManifestFile(name, dir.DisableExtensionFilter) {
			return nil
		}
		if dir.Include != "" && !render.MatchGlob(dir.Include, relName) {
			return nil
		}
		if dir.Exclude != "" && render.MatchGlob(dir.Exclude, relName) {
			return nil
		}
		files = append(files, relName)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, f := range files {
		name := path.Join(app, f)
		data, err := root.ReadFile(name)
		if err != nil {
			return nil, err
		}
		if err := render.RefuseEncrypted(name, data); err != nil {
			return nil, err
		}
		objs, err := resource.Decode(name, data, r.opts.Limits.Decode)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// isManifestFile reports whether a file is read as manifests: by its
// extension, or any file but a .jsonnet one (the Jsonnet renderer's) with
// the extension filter disabled.
func isManifestFile(name string, anyExtension bool) bool {
	ext := strings.ToLower(path.Ext(name))
	if anyExtension {
		return ext != ".jsonnet"
	}
	switch ext {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}
