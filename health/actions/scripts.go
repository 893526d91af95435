package actions

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops/health"
)

// Definitions are one kind's action scripts, in the shape of the value of
// argocd-cm's resource.customizations.actions.<group_Kind> key.
type Definitions struct {
	// Discovery is discovery.lua's source.
	Discovery string `json:"discovery.lua"`
	// Actions are the action scripts.
	Actions []Definition `json:"definitions"`
	// MergeBuiltinActions, for a host's definitions, keeps the built-in
	// actions of the kind beside these (theirs win on a name clash), as
	// Argo CD's mergeBuiltinActions does. Default false: these replace
	// the built-in ones.
	MergeBuiltinActions bool `json:"mergeBuiltinActions,omitempty"`
}

// Definition is one action script.
type Definition struct {
	// Name is the action's name.
	Name string `json:"name"`
	// Script is action.lua's source.
	Script string `json:"action.lua"`
}

// ParseDefinitions decodes the YAML value of an argocd-cm
// resource.customizations.actions.<group_Kind> key. key appears in errors.
func ParseDefinitions(key, value string) (Definitions, error) {
	var d Definitions
	if err := yaml.UnmarshalStrict([]byte(value), &d); err != nil {
		return Definitions{}, fmt.Errorf("%s: %w: %v", key, ErrInvalidDefinition, err)
	}
	if err := d.validate(); err != nil {
		return Definitions{}, fmt.Errorf("%s: %w", key, err)
	}
	return d, nil
}

func (d Definitions) validate() error {
	if strings.TrimSpace(d.Discovery) == "" {
		return fmt.Errorf("%w: no discovery.lua", ErrInvalidDefinition)
	}
	seen := map[string]bool{}
	for i, a := range d.Actions {
		if a.Name == "" || strings.TrimSpace(a.Script) == "" {
			return fmt.Errorf("%w: definition %d needs a name and an action.lua", ErrInvalidDefinition, i)
		}
		if seen[a.Name] {
			return fmt.Errorf("%w: action %q defined twice", ErrInvalidDefinition, a.Name)
		}
		seen[a.Name] = true
	}
	return nil
}

// builtinScripts holds the shipped actions in Argo CD's layout:
// scripts/<group>/<Kind>/actions/discovery.lua, <name>/action.lua, and
// action_test.yaml with its testdata.
//
//go:embed all:scripts
var builtinScripts embed.FS

// BuiltinScripts returns the shipped action scripts as a file system in
// Argo CD's resource_customizations layout, for RunTests or LoadDir.
func BuiltinScripts() fs.FS {
	sub, _ := fs.Sub(builtinScripts, "scripts") // the folder is embedded: never fails
	return sub
}

// LoadDir reads every <group>/<Kind>/actions folder under fsys (Argo CD's
// resource_customizations layout; "_" in a group or kind folder is a
// wildcard) into definitions keyed by health.ScriptKey ("group/Kind").
// Each folder must hold a discovery.lua; every <name>/action.lua beside it
// is an action. Folders without an actions folder (health only) are
// skipped.
func LoadDir(fsys fs.FS) (map[string]Definitions, error) {
	out := map[string]Definitions{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() || d.Name() != "actions" {
			return nil
		}
		kindDir := path.Dir(p)
		group, kind := path.Dir(kindDir), path.Base(kindDir)
		if group == "." || strings.Contains(group, "/") {
			return nil // not <group>/<Kind>/actions
		}
		defs, err := loadActionsDir(fsys, p)
		if err != nil {
			return err
		}
		out[health.ScriptKey(group+"/"+kind)] = defs
		return fs.SkipDir
	})
	if err != nil {
		return nil, fmt.Errorf("actions: loading scripts: %w", err)
	}
	return out, nil
}

func loadActionsDir(fsys fs.FS, dir string) (Definitions, error) {
	var defs Definitions
	src, err := fs.ReadFile(fsys, path.Join(dir, "discovery.lua"))
	if errors.Is(err, fs.ErrNotExist) {
		return defs, fmt.Errorf("%s: %w: no discovery.lua", dir, ErrInvalidDefinition)
	}
	if err != nil {
		return defs, err
	}
	defs.Discovery = string(src)
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return defs, err
	}
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "testdata" {
			continue
		}
		src, err := fs.ReadFile(fsys, path.Join(dir, e.Name(), "action.lua"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return defs, err
		}
		defs.Actions = append(defs.Actions, Definition{Name: e.Name(), Script: string(src)})
	}
	slices.SortFunc(defs.Actions, func(a, b Definition) int { return strings.Compare(a.Name, b.Name) })
	return defs, defs.validate()
}
