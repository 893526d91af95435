package hydrator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"text/template"

	"github.com/go-git/go-billy/v5"
	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The files of a hydrated tree, as Argo CD names them.
const (
	// ManifestFile holds a path's rendered objects.
	ManifestFile = "manifest.yaml"
	// MetadataFile is the JSON Metadata of a path, and of the root.
	MetadataFile = "hydrator.metadata"
	// ReadmeFile is the README template's output for a path.
	ReadmeFile = "README.md"
	// NoteNamespace is the git notes reference marking hydrated commits
	// (refs/notes/hydrator.metadata).
	NoteNamespace = "hydrator.metadata"
)

// gitAttributes marks the generated files for forges, as Argo CD writes
// it at the root.
const gitAttributes = "**/README.md linguist-generated=true\n**/hydrator.metadata linguist-generated=true"

// Metadata is the content of hydrator.metadata (Argo CD's
// HydratorCommitMetadata: the same keys, so that a tool reading Argo CD's
// reads ours). The root's names the dry commit; a path's holds RepoURL,
// DrySHA and Commands only.
type Metadata struct {
	// RepoURL is the dry source's repository.
	RepoURL string `json:"repoURL,omitempty"`
	// DrySHA is the dry commit hydrated.
	DrySHA string `json:"drySha,omitempty"`
	// Commands are the commands that rendered the path.
	Commands []string `json:"commands,omitempty"`
	// Author is the dry commit's author, "Name <email>".
	Author string `json:"author,omitempty"`
	// Date is the dry commit's author date, RFC 3339.
	Date string `json:"date,omitempty"`
	// Subject is the dry commit message's first paragraph.
	Subject string `json:"subject,omitempty"`
	// Body is the rest of the dry commit message.
	Body string `json:"body,omitempty"`
	// References are commits the dry commit refers to (Argo CD's
	// RevisionReference). Argo CD reads them from the dry commit's
	// Argocd-reference-commit-* trailers; this package does not read
	// those yet, and leaves References empty.
	References []Reference `json:"references,omitempty"`
}

// Reference is Argo CD's RevisionReference: a commit related to the dry
// commit.
type Reference struct {
	// Commit is the related commit.
	Commit *CommitReference `json:"commit,omitempty"`
}

// CommitReference is Argo CD's CommitMetadata of a Reference.
type CommitReference struct {
	// Author is the commit's author.
	Author string `json:"author,omitempty"`
	// Date is the commit's date.
	Date string `json:"date,omitempty"`
	// Subject is the first line of the commit's message.
	Subject string `json:"subject,omitempty"`
	// Body is the commit's message after its subject.
	Body string `json:"body,omitempty"`
	// SHA is the commit's hash.
	SHA string `json:"sha,omitempty"`
	// RepoURL is the repository of the commit.
	RepoURL string `json:"repoUrl,omitempty"`
}

// PathManifests are one app's rendered objects and where they go.
type PathManifests struct {
	// Path is the folder, relative to the repository's root.
	Path string
	// Objects are the rendered objects, in order.
	Objects []*unstructured.Unstructured
	// Commands are the commands that rendered them (may be empty).
	Commands []string
}

// EncodeManifests writes objs as manifest.yaml holds them: each object a
// YAML document (keys sorted, indented by 2), separated by "---".
func EncodeManifests(objs []*unstructured.Unstructured) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	for _, o := range objs {
		if err := enc.Encode(o.Object); err != nil {
			return nil, fmt.Errorf("encode %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// encodeMetadata writes m as hydrator.metadata holds it: indented JSON,
// HTML left unescaped, ending with a newline.
func encodeMetadata(m Metadata) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetIndent("", "  ")
	e.SetEscapeHTML(false)
	if err := e.Encode(m); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeTree writes the hydrated files of paths into fs (a checkout of the
// branch's tip) and returns the paths it wrote, or none when no path's
// manifest.yaml changed: then there is nothing to commit. root is the
// root's metadata; readme the README template.
func writeTree(fs billy.Filesystem, root Metadata, paths []PathManifests, readme *template.Template) ([]string, error) {
	var written []string
	for _, p := range paths {
		dir := cleanPath(p.Path)
		manifests, err := EncodeManifests(p.Objects)
		if err != nil {
			return nil, fmt.Errorf("path %s: %w", p.Path, err)
		}
		file := path.Join(dir, ManifestFile)
		old, err := readFile(fs, file)
		if err != nil {
			return nil, err
		}
		if old != nil && bytes.Equal(old, manifests) {
			continue
		}
		meta := Metadata{RepoURL: root.RepoURL, DrySHA: root.DrySHA, Commands: p.Commands}
		metaJSON, err := encodeMetadata(meta)
		if err != nil {
			return nil, err
		}
		var rd bytes.Buffer
		if err := readme.Execute(&rd, meta); err != nil {
			return nil, fmt.Errorf("README template: %w", err)
		}
		for _, f := range []struct {
			name string
			data []byte
		}{{file, manifests}, {path.Join(dir, MetadataFile), metaJSON}, {path.Join(dir, ReadmeFile), rd.Bytes()}} {
			if err := writeFile(fs, f.name, f.data); err != nil {
				return nil, err
			}
			written = append(written, f.name)
		}
	}
	if len(written) == 0 {
		return nil, nil
	}
	rootJSON, err := encodeMetadata(root)
	if err != nil {
		return nil, err
	}
	if err := writeFile(fs, MetadataFile, rootJSON); err != nil {
		return nil, err
	}
	if err := writeFile(fs, ".gitattributes", []byte(gitAttributes)); err != nil {
		return nil, err
	}
	return append(written, MetadataFile, ".gitattributes"), nil
}

// cleanPath is p relative to the repository's root, slash-separated.
func cleanPath(p string) string {
	return strings.TrimPrefix(path.Clean("/"+strings.ReplaceAll(p, "\\", "/")), "/")
}

// IsRootPath reports whether p names the repository's root, where Argo CD
// refuses to hydrate.
func IsRootPath(p string) bool { return cleanPath(p) == "" }

func readFile(fs billy.Filesystem, name string) ([]byte, error) {
	f, err := fs.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	defer f.Close()
	return io.ReadAll(f)
}

func writeFile(fs billy.Filesystem, name string, data []byte) error {
	if dir := path.Dir(name); dir != "." {
		if err := fs.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	f, err := fs.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	return f.Close()
}
