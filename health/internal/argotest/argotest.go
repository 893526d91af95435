// Package argotest is the one runner of Argo CD's Lua script test suites,
// shared by package health (health_test.yaml next to each health.lua) and
// package health/actions (action_test.yaml in each actions folder): it
// finds the script folders of a tree, reads a folder's test file (a
// missing file or one without cases is reported with the caller's
// ErrNoTests, never silently passed) and the objects its cases name
// (inside the folder, under a size limit). Each caller judges its cases as
// Argo CD's own test of that kind does.
package argotest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops/resource"
)

// MaxInput bounds each script, test file, input object and expected
// output a suite reads.
const MaxInput = 4 << 20

// Folders walks root and returns, sorted, the folders found calls true
// for: a file's path (whose folder is then the script folder) or a
// folder's (which is then not walked further).
func Folders(root fs.FS, found func(p string, d fs.DirEntry) bool) ([]string, error) {
	var out []string
	err := fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !found(p, d) {
			return nil
		}
		if d.IsDir() {
			out = append(out, p)
			return fs.SkipDir
		}
		out = append(out, path.Dir(p))
		return nil
	})
	slices.Sort(out)
	return out, err
}

// ReadTests decodes the YAML test file name into v, and returns
// errNoTests (wrapped, naming the file) when the file does not exist or
// cases(), called after decoding, says it holds none.
func ReadTests(root fs.FS, name string, v any, cases func() int, errNoTests error) error {
	raw, err := ReadLimited(root, name)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", name, errNoTests)
	}
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if cases() == 0 {
		return fmt.Errorf("%s: %w", name, errNoTests)
	}
	return nil
}

// CaseFile is the path of the file a case's field (inputPath,
// expectedOutputPath) names, rel to dir; within says where it must stay:
// "" anywhere in root, else inside that folder.
func CaseFile(field, dir, rel, within string) (string, error) {
	if rel == "" {
		return "", fmt.Errorf("%s is empty", field)
	}
	p := path.Join(dir, rel)
	if !fs.ValidPath(p) || (within != "" && !strings.HasPrefix(p, within+"/")) {
		return "", fmt.Errorf("%s %q leaves the tested folder", field, p)
	}
	return p, nil
}

// ReadObject reads the one object of the file the case's inputPath rel
// names (CaseFile's rules).
func ReadObject(root fs.FS, dir, rel, within string) (*unstructured.Unstructured, error) {
	p, err := CaseFile("inputPath", dir, rel, within)
	if err != nil {
		return nil, err
	}
	data, err := ReadLimited(root, p)
	if err != nil {
		return nil, err
	}
	objs, err := resource.Decode(p, data, resource.DefaultDecodeOptions())
	if err != nil {
		return nil, err
	}
	if len(objs) != 1 {
		return nil, fmt.Errorf("%s: want one object, found %d", rel, len(objs))
	}
	return objs[0], nil
}

// ReadLimited reads name, refusing one larger than MaxInput.
func ReadLimited(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(f, MaxInput+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if n > MaxInput {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, MaxInput)
	}
	return buf.Bytes(), nil
}
