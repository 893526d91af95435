package jsonnet

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"

	gojsonnet "github.com/google/go-jsonnet"

	"github.com/kubegitops/gitops/render"
)

// importer resolves import and importstr through a render.Root: relative to
// the importing file first, then in each library directory. go-jsonnet
// requires the same Contents for the same path, so found files are kept.
type importer struct {
	root *render.Root
	libs []string
	mu   sync.Mutex
	seen map[string]gojsonnet.Contents
	// refused is the first import refused for safety; go-jsonnet turns
	// importer errors into text, so the renderer returns this one instead.
	refused error
}

func (i *importer) refuse(err error) (gojsonnet.Contents, string, error) {
	i.mu.Lock()
	if i.refused == nil {
		i.refused = err
	}
	i.mu.Unlock()
	return gojsonnet.Contents{}, "", err
}

// refusal returns the first refused import, if any.
func (i *importer) refusal() error {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.refused
}

func newImporter(root *render.Root, libs []string) *importer {
	return &importer{root: root, libs: libs, seen: map[string]gojsonnet.Contents{}}
}

// Import implements gojsonnet.Importer.
func (i *importer) Import(importedFrom, importedPath string) (gojsonnet.Contents, string, error) {
	if render.URLScheme(importedPath) != "" {
		return i.refuse(&render.PathError{Op: "import", Path: importedPath, Err: render.ErrSchemeNotAllowed})
	}
	if strings.HasPrefix(importedPath, "/") {
		return i.refuse(&render.PathError{Op: "import", Path: importedPath, Err: render.ErrAbsolutePath})
	}
	dirs := append([]string{path.Dir(importedFrom)}, i.libs...)
	if importedFrom == "" {
		dirs = []string{"."} // the main file, by its path from the root
	}
	for _, d := range dirs {
		p, err := i.root.Sub(d, importedPath)
		if err != nil {
			return i.refuse(err)
		}
		i.mu.Lock()
		c, ok := i.seen[p]
		i.mu.Unlock()
		if ok {
			return c, p, nil
		}
		data, err := i.root.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return i.refuse(err)
		}
		c = gojsonnet.MakeContentsRaw(data)
		i.mu.Lock()
		i.seen[p] = c
		i.mu.Unlock()
		return c, p, nil
	}
	return gojsonnet.Contents{}, "", &render.PathError{Op: "import", Path: importedPath, Err: fmt.Errorf("%w (searched %s)", fs.ErrNotExist, strings.Join(dirs, ", "))}
}
