package health

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// builtinScripts holds the Lua health scripts shipped with the package, in
// Argo CD's layout: scripts/<group>/<Kind>/health.lua, with a
// health_test.yaml and testdata/ next to each. A group or kind written as
// "_" is a wildcard ("*"), so scripts/_.crossplane.io/_ covers every kind of
// every Crossplane group.
//
// The "all:" prefix is needed because go:embed skips names starting with
// "_", which is how Argo CD spells its wildcard folders.
//
//go:embed all:scripts
var builtinScripts embed.FS

// BuiltinScripts returns the shipped scripts as a file system in Argo CD's
// layout (health.lua, health_test.yaml and testdata under
// <group>/<Kind>/), for RunScriptTests or for hosts that want to read them.
func BuiltinScripts() fs.FS {
	sub, _ := fs.Sub(builtinScripts, "scripts") // the folder is embedded: never fails
	return sub
}

// ScriptKey normalises an Argo CD customisation key to "group/Kind" ("Kind"
// for the core group). It accepts "group/Kind", "group_Kind" (the
// resource.customizations.health.<key> form), and wildcards written as "*"
// or, as in Argo CD's folder names, "_".
func ScriptKey(key string) string {
	group, kind, ok := strings.Cut(key, "/")
	if !ok {
		if g, k, ok2 := strings.Cut(key, "_"); ok2 && g != "" && k != "" {
			group, kind = g, k
		} else {
			group, kind = "", key
		}
	}
	group = wildcardName(group)
	kind = wildcardName(kind)
	if group == "" {
		return kind
	}
	return group + "/" + kind
}

// wildcardName turns Argo's "_" wildcard into "*" in a group or kind.
func wildcardName(s string) string {
	if !strings.Contains(s, "_") {
		return s
	}
	return strings.ReplaceAll(s, "_", "*")
}

func gkKey(gk schema.GroupKind) string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Group + "/" + gk.Kind
}

// loadScriptDir reads every <group>/<Kind>/health.lua under fsys into a map
// keyed by ScriptKey, with the path each came from.
func loadScriptDir(fsys fs.FS) (map[string]scriptSource, error) {
	out := map[string]scriptSource{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() != "health.lua" {
			return nil
		}
		dir := path.Dir(p)
		kind := path.Base(dir)
		group := path.Dir(dir)
		if group == "." || strings.Contains(group, "/") {
			return nil // not <group>/<Kind>/health.lua
		}
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		out[ScriptKey(group+"/"+kind)] = scriptSource{path: p, src: string(src)}
		return nil
	})
	return out, err
}

type scriptSource struct{ path, src string }

// LoadScripts reads the health scripts of a library in Argo CD's
// resource_customizations layout (<group>/<Kind>/health.lua; "_" in a
// folder name is a wildcard) into overrides for Options.Overrides, keyed
// by ScriptKey. Other files (tests, actions) are ignored. A checkout of
// Argo CD's resource_customizations, or a host's own library, loads
// unchanged; scripts are compiled (and a broken one reported) by
// NewChecker.
func LoadScripts(fsys fs.FS) (map[string]string, error) {
	found, err := loadScriptDir(fsys)
	if err != nil {
		return nil, fmt.Errorf("health: loading scripts: %w", err)
	}
	out := make(map[string]string, len(found))
	for key, s := range found {
		out[key] = s.src
	}
	return out, nil
}
