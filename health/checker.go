package health

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegitops/gitops/hooks"
	"github.com/kubegitops/gitops/resource"
)

// Checker judges the health of one object. It returns nil, nil when it
// has no opinion about the object, so checkers can be chained.
type Checker interface {
	Check(obj *unstructured.Unstructured) (*Status, error)
}

// ContextChecker is a Checker whose checks can be cancelled (a Lua script
// stops when ctx ends); *DefaultChecker is one.
type ContextChecker interface {
	Checker
	CheckContext(ctx context.Context, obj *unstructured.Unstructured) (*Status, error)
}

// CheckContext judges obj with c, passing ctx on when c is a
// ContextChecker, so that a refresh or sync that is cancelled also stops
// the health scripts it runs.
func CheckContext(ctx context.Context, c Checker, obj *unstructured.Unstructured) (*Status, error) {
	if cc, ok := c.(ContextChecker); ok {
		return cc.CheckContext(ctx, obj)
	}
	return c.Check(obj)
}

// CheckerFunc adapts a function to Checker.
type CheckerFunc func(obj *unstructured.Unstructured) (*Status, error)

// Check implements Checker.
func (f CheckerFunc) Check(obj *unstructured.Unstructured) (*Status, error) { return f(obj) }

// HookFinalizer is the finalizer Argo CD and this library's syncer put on
// hooks (hooks.Finalizer, its one home); a hook being deleted while it holds
// it, or hooks.LegacyFinalizer, is judged by its state rather than as
// "Pending deletion".
const HookFinalizer = hooks.Finalizer

// Options configure a DefaultChecker.
type Options struct {
	// Overrides are host-supplied Lua health scripts keyed by "group/Kind"
	// ("Kind" for the core group; "group_Kind" is accepted too). A key may
	// use "*" (or Argo's "_") as a wildcard in the group or the kind, for
	// example "*.crossplane.io/*". An override wins over every built-in.
	// Overrides from elsewhere join these with MergeOverrides or
	// WithOverrides (argocd-cm's, which win on a kind both give).
	Overrides map[string]string
	// Checks are host-supplied Go checks by group and kind, for custom
	// resources whose health a script cannot judge well. A Go check wins
	// over every script and built-in, but never sees an object being
	// deleted (that one is Progressing, "Pending deletion"). It runs with
	// no time limit: it must not block.
	Checks map[schema.GroupKind]CheckerFunc
	// DisableBuiltinScripts leaves out the Lua scripts shipped with this
	// package (BuiltinScripts). Default false: they are used.
	DisableBuiltinScripts bool
	// DisableGeneric turns off GenericHealth for kinds that have no other
	// check, so they get no health (nil), as in gitops-engine. Default
	// false: the generic fallback is used.
	DisableGeneric bool
	// Lua configures the interpreter.
	Lua LuaOptions
}

// DefaultOptions returns options that use the shipped scripts and the
// generic fallback, with default Lua limits.
func DefaultOptions() Options { return Options{Lua: DefaultLuaOptions()} }

// DefaultChecker judges any object. For each object it uses the first of
// these that applies:
//
//  1. metadata.deletionTimestamp set (and not a hook held by
//     HookFinalizer): Progressing "Pending deletion";
//  2. the host's Go check for the kind (Options.Checks);
//  3. an override script for the exact group/Kind;
//  4. an override script whose wildcard key matches;
//  5. a shipped script for the exact group/Kind;
//  6. a shipped wildcard script;
//  7. the built-in Go check for the kind (BuiltinKinds);
//  8. GenericHealth, unless disabled.
//
// A DefaultChecker is safe for concurrent use.
//
// When several wildcards match, the most specific wins: the key with the
// most literal characters, then the lexically smallest, so the choice never
// depends on map order. A script is chosen by kind alone: whatever it
// returns is the answer, and a failing script yields Unknown and its error.
type DefaultChecker struct {
	// opts are the options the checker was built with (Options,
	// WithOverrides).
	opts Options
	lua  *LuaEngine
	// tiers are the four script tiers in the order of the doc comment.
	overrideExact, shippedExact map[string]*LuaScript
	overrideWild, shippedWild   []wildcardScript // sorted by specificity
	builtin                     map[schema.GroupKind]checkFunc
	hostChecks                  map[schema.GroupKind]CheckerFunc
	generic                     bool
	// resolved caches scriptFor per kind (a *LuaScript, nil for none):
	// the tiers never change after NewChecker, and matching wildcards on
	// every call would cost more than most checks.
	resolved sync.Map
}

type wildcardScript struct {
	pattern string // "group/Kind" with '*'
	script  *LuaScript
}

// NewChecker compiles every script (so a broken script is reported when it
// loads, naming its key, not when an object first needs it) and returns
// the checker.
func NewChecker(opts Options) (*DefaultChecker, error) {
	c := &DefaultChecker{
		opts:          Options{Overrides: maps.Clone(opts.Overrides), Checks: maps.Clone(opts.Checks), DisableBuiltinScripts: opts.DisableBuiltinScripts, DisableGeneric: opts.DisableGeneric, Lua: opts.Lua},
		lua:           NewLuaEngine(opts.Lua),
		overrideExact: map[string]*LuaScript{},
		shippedExact:  map[string]*LuaScript{},
		builtin:       builtinChecks(),
		hostChecks:    maps.Clone(opts.Checks),
		generic:       !opts.DisableGeneric,
	}
	keys := make([]string, 0, len(opts.Overrides))
	for k := range opts.Overrides {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		key := ScriptKey(k)
		s, err := c.lua.Compile("override "+key, opts.Overrides[k])
		if err != nil {
			return nil, fmt.Errorf("health: override %q: %w", k, err)
		}
		if strings.Contains(key, "*") {
			c.overrideWild = append(c.overrideWild, wildcardScript{pattern: key, script: s})
		} else {
			c.overrideExact[key] = s
		}
	}
	if !opts.DisableBuiltinScripts {
		shipped, err := loadScriptDir(BuiltinScripts())
		if err != nil {
			return nil, fmt.Errorf("health: reading shipped scripts: %w", err)
		}
		for key, src := range shipped {
			s, err := c.lua.Compile(src.path, src.src)
			if err != nil {
				return nil, fmt.Errorf("health: shipped script %s: %w", src.path, err)
			}
			if strings.Contains(key, "*") {
				c.shippedWild = append(c.shippedWild, wildcardScript{pattern: key, script: s})
			} else {
				c.shippedExact[key] = s
			}
		}
	}
	sortBySpecificity(c.overrideWild)
	sortBySpecificity(c.shippedWild)
	return c, nil
}

func sortBySpecificity(w []wildcardScript) {
	literal := func(p string) int { return len(p) - strings.Count(p, "*") }
	slices.SortFunc(w, func(a, b wildcardScript) int {
		if la, lb := literal(a.pattern), literal(b.pattern); la != lb {
			return lb - la
		}
		return strings.Compare(a.pattern, b.pattern)
	})
}

// Check implements Checker with a background context; see CheckContext.
func (c *DefaultChecker) Check(obj *unstructured.Unstructured) (*Status, error) {
	return c.CheckContext(context.Background(), obj)
}

// CheckContext judges obj following the order in the type's doc comment.
// It returns nil, nil only when no rule applies (with DisableGeneric, or an
// object without status conventions). A failing script yields an Unknown
// status and an error naming the object.
func (c *DefaultChecker) CheckContext(ctx context.Context, obj *unstructured.Unstructured) (*Status, error) {
	if obj.GetDeletionTimestamp() != nil && !isHeldHook(obj) {
		return &Status{Code: Progressing, Message: "Pending deletion"}, nil
	}
	gk := resource.GroupKindOf(obj)
	if check, ok := c.hostChecks[gk]; ok {
		st, err := check(obj)
		if err != nil {
			err = fmt.Errorf("%s: health: %w", resource.KeyOf(obj), err)
			return &Status{Code: Unknown, Message: err.Error()}, err
		}
		return st, nil
	}
	if script := c.scriptFor(gk); script != nil {
		st, err := c.lua.Run(ctx, script, obj)
		if err != nil {
			err = fmt.Errorf("%s: health: %w", resource.KeyOf(obj), err)
			return &Status{Code: Unknown, Message: err.Error()}, err
		}
		return st, nil
	}
	if check, ok := c.builtin[gk]; ok {
		return check(obj), nil
	}
	if c.generic {
		return GenericHealth(obj), nil
	}
	return nil, nil
}

// Pure reports whether c's verdict on an object of gk depends on that
// object alone: no host Go check and no Lua script judges the kind (a
// script may read the clock; a host's check may read anything), so a
// built-in Go check, GenericHealth or no check at all does, and so does
// "Pending deletion". A caller may then keep a verdict for an object's
// version (its uid and resourceVersion) and use it again while it judges
// with the same checker: the engine's refresh memo does.
func (c *DefaultChecker) Pure(gk schema.GroupKind) bool {
	if _, ok := c.hostChecks[gk]; ok {
		return false
	}
	return c.scriptFor(gk) == nil
}

// ScriptFor returns the name of the Lua script that judges objects of gk,
// or "" when a Go check or the generic fallback does.
func (c *DefaultChecker) ScriptFor(gk schema.GroupKind) string {
	if _, ok := c.hostChecks[gk]; ok {
		return ""
	}
	if s := c.scriptFor(gk); s != nil {
		return s.Name()
	}
	return ""
}

func (c *DefaultChecker) scriptFor(gk schema.GroupKind) *LuaScript {
	if s, ok := c.resolved.Load(gk); ok {
		return s.(*LuaScript)
	}
	s := c.resolveScript(gk)
	c.resolved.Store(gk, s)
	return s
}

func (c *DefaultChecker) resolveScript(gk schema.GroupKind) *LuaScript {
	key := gkKey(gk)
	if s, ok := c.overrideExact[key]; ok {
		return s
	}
	if s := matchWildcard(c.overrideWild, key); s != nil {
		return s
	}
	if s, ok := c.shippedExact[key]; ok {
		return s
	}
	return matchWildcard(c.shippedWild, key)
}

func matchWildcard(list []wildcardScript, key string) *LuaScript {
	for _, w := range list {
		if matchKey(w.pattern, key) {
			return w.script
		}
	}
	return nil
}

// matchKey matches "group/Kind" against a pattern where '*' stands for any
// run of characters. path.Match is used on each half separately, so '*'
// in the group can cross dots but never the slash.
func matchKey(pattern, key string) bool {
	pg, pk, _ := strings.Cut(pattern, "/")
	kg, kk, ok := strings.Cut(key, "/")
	if !ok {
		kg, kk = "", key
	}
	if !strings.Contains(pattern, "/") {
		pg, pk = "", pattern
	}
	mg, err1 := path.Match(pg, kg)
	mk, err2 := path.Match(pk, kk)
	return err1 == nil && err2 == nil && mg && mk
}

// isHeldHook reports whether obj is a hook kept alive by HookFinalizer.
func isHeldHook(obj *unstructured.Unstructured) bool {
	ann := obj.GetAnnotations()
	if ann[resource.AnnotationHook] == "" && ann[resource.AnnotationHelmHook] == "" {
		return false
	}
	return slices.ContainsFunc(obj.GetFinalizers(), hooks.IsFinalizer)
}
