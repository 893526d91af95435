package actions

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/health/internal/luavm"
	"github.com/kubegitops/gitops/resource"
)

// Options configure a Runner.
type Options struct {
	// Overrides are the host's action scripts keyed by "group/Kind"
	// ("group_Kind" and the "*" or "_" wildcards are accepted, as for
	// health overrides). A kind's overrides replace its built-in actions
	// unless they set MergeBuiltinActions.
	Overrides map[string]Definitions
	// DisableBuiltin leaves out the actions shipped with this package.
	// Default false: they are offered.
	DisableBuiltin bool
	// Lua configures the interpreter: the same limits as health scripts.
	Lua health.LuaOptions
}

// DefaultOptions returns options with the built-in actions and the
// default Lua limits.
func DefaultOptions() Options { return Options{Lua: health.DefaultLuaOptions()} }

// Runner lists and runs resource actions. It is safe for concurrent use.
type Runner struct {
	vm    *luavm.VM
	exact map[string]*kindScripts
	wild  []*kindScripts // sorted by specificity
}

// kindScripts are the compiled scripts of one key.
type kindScripts struct {
	key       string
	discovery []*luavm.Program // builtin first when merged: later ones win
	actions   map[string]*luavm.Program
}

// New compiles every script, so a broken one is reported when it loads,
// naming its key, and returns the Runner.
func New(opts Options) (*Runner, error) {
	lopts := opts.Lua
	if lopts.Clock == nil {
		lopts.Clock = health.DefaultLuaOptions().Clock
	}
	r := &Runner{
		vm:    luavm.New(luavm.Options{Limits: lopts.Limits, Clock: luavm.Clock(lopts.Clock), CacheSize: lopts.CacheSize, RequireOS: true}),
		exact: map[string]*kindScripts{},
	}
	all := map[string]*kindScripts{}
	if !opts.DisableBuiltin {
		builtin, err := LoadDir(BuiltinScripts())
		if err != nil {
			return nil, err
		}
		for key, defs := range builtin {
			ks, err := r.compile(key, defs, nil)
			if err != nil {
				return nil, err
			}
			all[key] = ks
		}
	}
	for rawKey, defs := range opts.Overrides {
		key := health.ScriptKey(rawKey)
		if err := defs.validate(); err != nil {
			return nil, fmt.Errorf("actions %s: %w", key, err)
		}
		var base *kindScripts
		if defs.MergeBuiltinActions {
			base = all[key]
		}
		ks, err := r.compile(key, defs, base)
		if err != nil {
			return nil, err
		}
		all[key] = ks
	}
	for key, ks := range all {
		if strings.Contains(key, "*") {
			r.wild = append(r.wild, ks)
		} else {
			r.exact[key] = ks
		}
	}
	slices.SortFunc(r.wild, func(a, b *kindScripts) int {
		la, lb := len(strings.ReplaceAll(a.key, "*", "")), len(strings.ReplaceAll(b.key, "*", ""))
		if la != lb {
			return lb - la
		}
		return strings.Compare(a.key, b.key)
	})
	return r, nil
}

func (r *Runner) compile(key string, defs Definitions, base *kindScripts) (*kindScripts, error) {
	ks := &kindScripts{key: key, actions: map[string]*luavm.Program{}}
	if base != nil {
		ks.discovery = slices.Clone(base.discovery)
		maps.Copy(ks.actions, base.actions)
	}
	p, err := r.vm.Compile(key+"/actions/discovery.lua", defs.Discovery)
	if err != nil {
		return nil, err
	}
	ks.discovery = append(ks.discovery, p)
	for _, a := range defs.Actions {
		p, err := r.vm.Compile(key+"/actions/"+a.Name+"/action.lua", a.Script)
		if err != nil {
			return nil, err
		}
		ks.actions[a.Name] = p
	}
	return ks, nil
}

// scriptsFor returns the scripts for a kind: the exact key, else the most
// specific matching wildcard, else nil.
func (r *Runner) scriptsFor(gk schema.GroupKind) *kindScripts {
	key := gk.Kind
	if gk.Group != "" {
		key = gk.Group + "/" + gk.Kind
	}
	if ks, ok := r.exact[key]; ok {
		return ks
	}
	for _, ks := range r.wild {
		if ok, _ := path.Match(ks.key, key); ok {
			return ks
		}
	}
	return nil
}

// HasActions reports whether any discovery script covers the kind.
func (r *Runner) HasActions(gk schema.GroupKind) bool { return r.scriptsFor(gk) != nil }

// Discover runs the kind's discovery script(s) on obj and returns the
// actions it offers, sorted by name. A kind without scripts yields an
// *Error wrapping ErrNoActions.
func (r *Runner) Discover(ctx context.Context, obj *unstructured.Unstructured) ([]Action, error) {
	id := resource.KeyOf(obj).String()
	ks := r.scriptsFor(obj.GroupVersionKind().GroupKind())
	if ks == nil {
		return nil, &Error{Object: id, Err: ErrNoActions}
	}
	list, err := r.discover(ctx, ks, obj)
	if err != nil {
		return nil, &Error{Object: id, Err: err}
	}
	return list, nil
}

func (r *Runner) discover(ctx context.Context, ks *kindScripts, obj *unstructured.Unstructured) ([]Action, error) {
	byName := map[string]Action{}
	for _, p := range ks.discovery {
		ret, err := r.vm.Eval(ctx, p, obj.Object, nil)
		if err != nil {
			return nil, err
		}
		found, err := parseDiscovery(ret)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Name(), err)
		}
		for _, a := range found {
			byName[a.Name] = a
		}
	}
	out := slices.Collect(maps.Values(byName))
	slices.SortFunc(out, func(a, b Action) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Run runs the named action on obj (the live object) with params and
// returns the validated result; it changes neither obj nor any cluster.
// The action must be offered by discovery and enabled; params must be
// ones discovery declares (a declared param that is not given gets its
// default, when it has one). Every failure is an *Error naming obj and the
// action, wrapping ErrNoActions, ErrUnknownAction, ErrDisabled,
// ErrInvalidResult, ErrIdentityChanged, ErrForbiddenField or a
// *health.LuaError (a loop, an allocation bomb, a runtime error).
func (r *Runner) Run(ctx context.Context, obj *unstructured.Unstructured, action string, params map[string]string) (Result, error) {
	id := resource.KeyOf(obj).String()
	fail := func(err error) (Result, error) { return Result{}, &Error{Object: id, Action: action, Err: err} }
	ks := r.scriptsFor(obj.GroupVersionKind().GroupKind())
	if ks == nil {
		return fail(ErrNoActions)
	}
	offered, err := r.discover(ctx, ks, obj)
	if err != nil {
		return fail(err)
	}
	i := slices.IndexFunc(offered, func(a Action) bool { return a.Name == action })
	prog := ks.actions[action]
	if i < 0 || prog == nil {
		return fail(ErrUnknownAction)
	}
	if offered[i].Disabled {
		return fail(ErrDisabled)
	}
	actionParams, err := bindParams(offered[i], params)
	if err != nil {
		return fail(err)
	}
	impacted, _, err := r.runScript(ctx, prog, obj, actionParams)
	if err != nil {
		return fail(err)
	}
	return Result{Action: action, Impacted: impacted}, nil
}

// runScript runs one action.lua and validates its result; it also returns
// the script's raw return value (for RunTests, which compares what the
// script returned, not only what would be applied).
func (r *Runner) runScript(ctx context.Context, prog *luavm.Program, obj *unstructured.Unstructured, actionParams map[string]any) ([]Impacted, any, error) {
	ret, err := r.vm.Eval(ctx, prog, obj.Object, map[string]any{"actionParams": actionParams})
	if err != nil {
		return nil, nil, err
	}
	impacted, err := buildResult(obj, ret)
	return impacted, ret, err
}

// bindParams checks params against the declared ones and fills defaults.
func bindParams(a Action, params map[string]string) (map[string]any, error) {
	out := make(map[string]any, len(params))
	declared := map[string]bool{}
	for _, p := range a.Params {
		declared[p.Name] = true
		if p.Default != "" {
			out[p.Name] = p.Default
		}
	}
	for k, v := range params {
		if !declared[k] {
			return nil, fmt.Errorf("%w: %q is not one the action declares", ErrInvalidParam, k)
		}
		out[k] = v
	}
	return out, nil
}
