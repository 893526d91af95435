package render

import (
	"errors"
	"io/fs"
	"path"
	"strings"
)

// KustomizationFileNames are the names Kustomize accepts, in its order.
var KustomizationFileNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// Detect decides which tool renders the application at dir:
//
//  1. a kustomization file (kustomization.yaml, kustomization.yml or
//     Kustomization) makes it Kustomize;
//  2. else a Chart.yaml makes it Helm;
//  3. else a *.jsonnet or *.libsonnet file directly in dir makes it Jsonnet;
//  4. else it is a plain directory.
//
// The order is Argo CD's. Only dir itself is listed, never its children.
// Detect reads through a Root, so a dir that leaves fsys fails.
func Detect(fsys fs.FS, dir string) (Kind, error) {
	root, ok := fsys.(*Root)
	if !ok {
		root = NewRoot(fsys, Limits{})
	}
	entries, err := root.ReadDir(dir)
	if err != nil {
		return "", err
	}
	names := make(map[string]bool, len(entries))
	jsonnet := false
	for _, e := range entries {
		names[e.Name()] = true
		ext := path.Ext(e.Name())
		if (ext == ".jsonnet" || ext == ".libsonnet") && !strings.HasPrefix(e.Name(), ".") {
			jsonnet = true
		}
	}
	for _, n := range KustomizationFileNames {
		if names[n] {
			return KindKustomize, nil
		}
	}
	if names["Chart.yaml"] {
		return KindHelm, nil
	}
	if jsonnet {
		return KindJsonnet, nil
	}
	return KindPlain, nil
}

// Tools renders each application with the renderer of its tool: Input.Tool
// when set, else the result of Detect (a Plugin is never detected; set
// Input.Tool or Input.Plugin to use one). It is itself a Renderer and an
// Identifier, so it can be wrapped by Cached.
type Tools map[Kind]Renderer

// ToolFor returns the tool that renders in.
func ToolFor(in Input) (Kind, error) {
	if in.Tool != "" {
		return in.Tool, nil
	}
	if in.Plugin != nil {
		return KindPlugin, nil
	}
	if in.FS == nil {
		return "", &Error{Path: in.Path, AppName: in.AppName, Err: errors.Join(ErrInvalidInput, errors.New("Input.FS is nil"))}
	}
	return Detect(in.FS, in.Path)
}

func (t Tools) pick(in Input) (Kind, Renderer, error) {
	kind, err := ToolFor(in)
	if err != nil {
		return "", nil, err
	}
	r, ok := t[kind]
	if !ok || r == nil {
		return kind, nil, &Error{Tool: kind, AppName: in.AppName, Path: in.Path, Err: ErrNoRenderer}
	}
	return kind, r, nil
}
