package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	gosync "sync"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"
)

// appFolder is the --apps folder as the portal writes it: an edit, a
// create and a delete made in the portal change its files, so that they
// outlast the portal. Each write replaces a file whole and atomically (a
// temporary file in the folder, then a rename), and changes only what the
// edit changed: other documents, other fields (those the portal does not
// know included) and comments stay as the YAML library keeps them.
type appFolder struct {
	dir string
	mu  gosync.Mutex
}

// appFileError is a write to the --apps folder that failed, naming the app
// and the file.
type appFileError struct {
	App, File string
	Err       error
}

// Error implements error.
func (e *appFileError) Error() string {
	return fmt.Sprintf("application %s: --apps file %s: %v", e.App, e.File, e.Err)
}

// Unwrap returns the cause.
func (e *appFileError) Unwrap() error { return e.Err }

// errAppNotInFolder: no file of the folder defines the app.
var errAppNotInFolder = errors.New("no file of the folder defines it")

// update writes the spec of next to the file that defines the app, where
// prev is the app as the portal served it until now: only the fields that
// differ between the two change in the file.
func (f *appFolder) update(prev, next *gitops.Application) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	file, data, err := f.find(next.Name)
	if err != nil {
		return &appFileError{App: next.Name, File: file, Err: err}
	}
	out, err := rewriteSpec(file, data, prev, next)
	if err != nil {
		return &appFileError{App: next.Name, File: file, Err: err}
	}
	if err := writeAtomic(filepath.Join(f.dir, file), out); err != nil {
		return &appFileError{App: next.Name, File: file, Err: err}
	}
	return nil
}

// create writes a to a file of its own, NAME.yaml, refusing when that file
// exists.
func (f *appFolder) create(a *gitops.Application) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	file := a.Name + ".yaml"
	path := filepath.Join(f.dir, file)
	if _, err := os.Lstat(path); err == nil {
		return &appFileError{App: a.Name, File: file, Err: errors.New("exists already")}
	}
	doc := map[string]any{"apiVersion": v1alpha1.SchemeGroupVersion.String(), "kind": "Application"}
	meta := map[string]any{"name": a.Name}
	if a.Namespace != "" {
		meta["namespace"] = a.Namespace
	}
	if len(a.Labels) > 0 {
		meta["labels"] = a.Labels
	}
	if len(a.Annotations) > 0 {
		meta["annotations"] = a.Annotations
	}
	if len(a.Finalizers) > 0 {
		meta["finalizers"] = a.Finalizers
	}
	doc["metadata"] = meta
	doc["spec"] = a.Spec
	out, err := sigsyaml.Marshal(doc)
	if err != nil {
		return &appFileError{App: a.Name, File: file, Err: err}
	}
	if err := writeAtomic(path, out); err != nil {
		return &appFileError{App: a.Name, File: file, Err: err}
	}
	return nil
}

// remove takes the app named name out of its file; a file left without a
// document is removed.
func (f *appFolder) remove(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	file, data, err := f.find(name)
	if err != nil {
		return &appFileError{App: name, File: file, Err: err}
	}
	path := filepath.Join(f.dir, file)
	if isJSON(file) {
		if err := os.Remove(path); err != nil {
			return &appFileError{App: name, File: file, Err: err}
		}
		return nil
	}
	docs, err := decodeDocs(data)
	if err != nil {
		return &appFileError{App: name, File: file, Err: err}
	}
	kept := docs[:0]
	for _, d := range docs {
		if !definesApp(d, name) {
			kept = append(kept, d)
		}
	}
	if len(kept) == 0 {
		if err := os.Remove(path); err != nil {
			return &appFileError{App: name, File: file, Err: err}
		}
		return nil
	}
	out, err := encodeDocs(kept)
	if err == nil {
		err = writeAtomic(path, out)
	}
	if err != nil {
		return &appFileError{App: name, File: file, Err: err}
	}
	return nil
}

// find returns the file (its name in the folder) that defines the app
// named name, and its content. The folder is read again at each write: a
// file changed by hand since the portal started is written as it is now.
func (f *appFolder) find(name string) (string, []byte, error) {
	files, err := v1alpha1.ManifestFiles(os.DirFS(f.dir), ".")
	if err != nil {
		return "", nil, err
	}
	for _, file := range files {
		data, err := os.ReadFile(filepath.Join(f.dir, file))
		if err != nil {
			return file, nil, err
		}
		if !bytes.Contains(data, []byte(name)) {
			continue
		}
		apps, err := v1alpha1.LoadApplications(bytes.NewReader(data))
		if err != nil {
			continue // not the portal's to judge here; loadAppsDir names it at start
		}
		for i := range apps {
			if apps[i].Name == name {
				return file, data, nil
			}
		}
	}
	return "", nil, errAppNotInFolder
}

func isJSON(file string) bool { return strings.EqualFold(filepath.Ext(file), ".json") }

// rewriteSpec is data with the app's spec changed from prev's to next's.
func rewriteSpec(file string, data []byte, prev, next *gitops.Application) ([]byte, error) {
	if isJSON(file) {
		return rewriteJSONSpec(data, next)
	}
	docs, err := decodeDocs(data)
	if err != nil {
		return nil, err
	}
	base, err := specNode(prev.Spec)
	if err != nil {
		return nil, err
	}
	want, err := specNode(next.Spec)
	if err != nil {
		return nil, err
	}
	for _, d := range docs {
		if !definesApp(d, next.Name) {
			continue
		}
		root := d.Content[0]
		spec := mapValue(root, "spec")
		if spec == nil {
			root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "spec"}, want)
		} else {
			mergeNode(spec, base, want)
		}
		return encodeDocs(docs)
	}
	return nil, errors.New("its document is not a plain Application (a List?): not written")
}

// rewriteJSONSpec is a JSON file of one Application with its spec replaced
// (JSON has no comments to keep; the other fields stay).
func rewriteJSONSpec(data []byte, next *gitops.Application) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc["kind"] != "Application" {
		return nil, errors.New("not a single Application object (a List?): not written")
	}
	spec, err := json.Marshal(next.Spec)
	if err != nil {
		return nil, err
	}
	doc["spec"] = json.RawMessage(spec)
	out, err := json.MarshalIndent(doc, "", "  ")
	return append(out, '\n'), err
}

// specNode is spec as a YAML node, with the fields' JSON names.
func specNode(spec v1alpha1.ApplicationSpec) (*yaml.Node, error) {
	b, err := sigsyaml.Marshal(spec)
	if err != nil {
		return nil, err
	}
	var n yaml.Node
	if err := yaml.Unmarshal(b, &n); err != nil {
		return nil, err
	}
	return n.Content[0], nil
}

// decodeDocs reads every document of a YAML stream.
func decodeDocs(data []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.Node
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, &n)
	}
}

// encodeDocs writes docs as a YAML stream, indented by two.
func encodeDocs(docs []*yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			return nil, err
		}
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// definesApp reports whether doc is the Application named name.
func definesApp(doc *yaml.Node, name string) bool {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return false
	}
	root := doc.Content[0]
	kind, meta := mapValue(root, "kind"), mapValue(root, "metadata")
	if kind == nil || kind.Value != "Application" || meta == nil {
		return false
	}
	n := mapValue(meta, "name")
	return n != nil && n.Value == name
}

// mapValue is the value of key in the mapping m, or nil.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// mergeNode changes file, the node as the file has it, by what changed
// from base (the portal's copy before the edit, nil where it had nothing)
// to want (after): a node that did not change is left as the file has it,
// with its comments and style; a mapping key that want dropped and base
// had is removed; a key base did not have (a field the portal does not
// know) is kept; a scalar, or a node whose kind changed, takes want's.
func mergeNode(file, base, want *yaml.Node) {
	if base != nil && sameNode(base, want) {
		return
	}
	switch {
	case file.Kind == yaml.MappingNode && want.Kind == yaml.MappingNode:
		var kept []*yaml.Node
		seen := map[string]bool{}
		for i := 0; i+1 < len(file.Content); i += 2 {
			k, v := file.Content[i], file.Content[i+1]
			seen[k.Value] = true
			if w := mapValue(want, k.Value); w != nil {
				mergeNode(v, mapValue(base, k.Value), w)
			} else if mapValue(base, k.Value) != nil {
				continue // dropped by the edit
			}
			kept = append(kept, k, v)
		}
		for i := 0; i+1 < len(want.Content); i += 2 {
			if !seen[want.Content[i].Value] {
				kept = append(kept, want.Content[i], want.Content[i+1])
			}
		}
		file.Content = kept
	case file.Kind == yaml.SequenceNode && want.Kind == yaml.SequenceNode:
		kept := make([]*yaml.Node, 0, len(want.Content))
		for i, w := range want.Content {
			if i >= len(file.Content) {
				kept = append(kept, w)
				continue
			}
			var b *yaml.Node
			if base != nil && base.Kind == yaml.SequenceNode && i < len(base.Content) {
				b = base.Content[i]
			}
			mergeNode(file.Content[i], b, w)
			kept = append(kept, file.Content[i])
		}
		file.Content = kept
	default:
		if file.Kind == want.Kind && file.Kind == yaml.ScalarNode && file.Value == want.Value && file.Tag == want.Tag {
			return
		}
		head, line, foot := file.HeadComment, file.LineComment, file.FootComment
		*file = *want
		file.HeadComment, file.LineComment, file.FootComment = head, line, foot
	}
}

// sameNode reports whether a and b hold the same value.
func sameNode(a, b *yaml.Node) bool {
	if a.Kind != b.Kind || len(a.Content) != len(b.Content) {
		return false
	}
	if a.Kind == yaml.ScalarNode && (a.Value != b.Value || a.ShortTag() != b.ShortTag()) {
		return false
	}
	for i := range a.Content {
		if !sameNode(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}

// writeAtomic replaces path with data: a temporary file in the same
// folder, synced, given path's mode, then renamed over it.
func writeAtomic(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	done = true
	return nil
}

// writeEdit writes an edit of an app from prev to next to the --apps
// folder, when the portal serves one.
func (s *server) writeEdit(prev, next *gitops.Application) error {
	if s.folder == nil {
		return nil
	}
	return s.folder.update(prev, next)
}

// writeCreate writes a new app to the --apps folder, when the portal
// serves one.
func (s *server) writeCreate(a *gitops.Application) error {
	if s.folder == nil {
		return nil
	}
	return s.folder.create(a)
}

// writeRemove takes a deleted app out of the --apps folder, when the
// portal serves one.
func (s *server) writeRemove(name string) error {
	if s.folder == nil {
		return nil
	}
	return s.folder.remove(name)
}
