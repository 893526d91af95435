package appset

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	gosync "sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Result is what a set generates: its Applications sorted by name, and
// each top-level generator's share.
type Result struct {
	// Applications are the set's Applications, sorted by name.
	Applications []*unstructured.Unstructured
	// Generators are each top-level generator's share, in spec order.
	Generators []GeneratorResult
}

// GeneratorResult is one top-level generator's Applications. Err is its
// failure this time; then Applications are its last good output (Stale)
// or none when it never succeeded.
type GeneratorResult struct {
	// Applications are the generator's Applications.
	Applications []*unstructured.Unstructured
	// Err is the generator's failure this time.
	Err error
	// Stale reports Applications kept from the last good generation.
	Stale bool
}

// Runner generates the Applications of ApplicationSets. It remembers each
// set's last good output per generator (so that a failing generator keeps
// it: nothing is deleted because a generator failed) and caches parsed git
// config files by content. It is safe for concurrent use.
type Runner struct {
	opts  Options
	files *fileCache

	mu   gosync.Mutex
	last map[string][]GeneratorResult // by set namespace/name
}

// NewRunner returns a Runner with opts (zero fields take defaults).
func NewRunner(opts Options) *Runner {
	return &Runner{opts: opts.withDefaults(), files: newFileCache(), last: map[string][]GeneratorResult{}}
}

// Generate is NewRunner(opts).Generate(ctx, set): one generation without
// memory.
func Generate(ctx context.Context, set *ApplicationSet, opts Options) (Result, error) {
	return NewRunner(opts).Generate(ctx, set)
}

// Forget drops what the Runner remembers of a set.
func (r *Runner) Forget(namespace, name string) {
	r.mu.Lock()
	delete(r.last, namespace+"/"+name)
	r.mu.Unlock()
}

// Generate renders the set's Applications. The rules:
//   - each top-level generator yields parameter sets (filtered by its
//     selector); each set is rendered into the set's template, overlaid
//     with the generator's own template, patched by templatePatch, and
//     checked by Options.Validate;
//   - a generator that fails (its parameters, a template, an invalid
//     Application) contributes its last good Applications instead, and its
//     *Error is returned with the Result;
//   - two Applications of the same name fail the whole generation: the
//     Result is the last good one (ErrDuplicateName).
//
// A caller must not delete Applications on a Result that came with an
// error.
func (r *Runner) Generate(ctx context.Context, set *ApplicationSet) (Result, error) {
	key := set.Namespace + "/" + set.Name
	r.mu.Lock()
	last := r.last[key]
	r.mu.Unlock()
	if len(last) != len(set.Spec.Generators) {
		last = nil
	}
	tm := newTemplater(set.Spec.GoTemplate, set.Spec.GoTemplateOptions)
	base, err := templateTree(&set.Spec.Template)
	if err != nil {
		return Result{}, &Error{Set: set.Name, Generator: -1, Err: err}
	}
	res := Result{Generators: make([]GeneratorResult, len(set.Spec.Generators))}
	var errs []error
	for i := range set.Spec.Generators {
		g := &set.Spec.Generators[i]
		apps, err := r.generateOne(ctx, set, g, tm, base)
		if err != nil {
			e := &Error{Set: set.Name, Generator: i, Kind: g.Kind(), Err: err}
			var ae *appError
			if errors.As(err, &ae) {
				e.App, e.Err = ae.app, ae.err
			}
			errs = append(errs, e)
			gr := GeneratorResult{Err: e}
			if last != nil && (last[i].Err == nil || last[i].Stale) {
				gr.Applications, gr.Stale = last[i].Applications, true
			}
			if apps != nil {
				// A partial result: what was generated, plus the last
				// good Applications it lacks (nothing is lost because
				// part of the input could not be read).
				gr.Applications, gr.Stale = union(apps, gr.Applications), true
			}
			res.Generators[i] = gr
			continue
		}
		res.Generators[i] = GeneratorResult{Applications: apps}
	}
	seen := map[string]int{}
	for i, gr := range res.Generators {
		for _, a := range gr.Applications {
			if j, dup := seen[a.GetName()]; dup {
				err := &Error{Set: set.Name, Generator: i, Kind: set.Spec.Generators[i].Kind(), App: a.GetName(),
					Err: fmt.Errorf("%w (also from generators[%d])", ErrDuplicateName, j)}
				if last == nil {
					return Result{}, errors.Join(append(errs, err)...)
				}
				return assemble(last), errors.Join(append(errs, err)...)
			}
			seen[a.GetName()] = i
			res.Applications = append(res.Applications, a)
		}
	}
	sort.Slice(res.Applications, func(a, b int) bool { return res.Applications[a].GetName() < res.Applications[b].GetName() })
	r.mu.Lock()
	r.last[key] = res.Generators
	r.mu.Unlock()
	return res, errors.Join(errs...)
}

// union is apps, then the Applications of old whose names apps lacks.
func union(apps, old []*unstructured.Unstructured) []*unstructured.Unstructured {
	have := make(map[string]bool, len(apps))
	for _, a := range apps {
		have[a.GetName()] = true
	}
	out := append([]*unstructured.Unstructured(nil), apps...)
	for _, a := range old {
		if !have[a.GetName()] {
			out = append(out, a)
		}
	}
	return out
}

func assemble(gens []GeneratorResult) Result {
	res := Result{Generators: gens}
	for _, g := range gens {
		res.Applications = append(res.Applications, g.Applications...)
	}
	sort.Slice(res.Applications, func(a, b int) bool { return res.Applications[a].GetName() < res.Applications[b].GetName() })
	return res
}

// appError is a failure rendering one Application.
type appError struct {
	app string
	err error
}

// Error implements error.
func (e *appError) Error() string { return fmt.Sprintf("application %q: %v", e.app, e.err) }

// Unwrap returns the cause.
func (e *appError) Unwrap() error { return e.err }

// genCtx is what generators need: the set, its templater, the options.
type genCtx struct {
	r    *Runner
	set  *ApplicationSet
	tmpl *templater
}

func (r *Runner) generateOne(ctx context.Context, set *ApplicationSet, g *Generator, tm *templater, base map[string]any) ([]*unstructured.Unstructured, error) {
	c := &genCtx{r: r, set: set, tmpl: tm}
	params, err := c.params(ctx, g, 0)
	var partial *partialError
	if err != nil && !errors.As(err, &partial) {
		return nil, err
	}
	tree := base
	if over := generatorTemplate(g); over != nil {
		ot, err := templateTree(over)
		if err != nil {
			return nil, err
		}
		tree = overlay(base, ot)
	}
	apps := make([]*unstructured.Unstructured, 0, len(params))
	for _, p := range params {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		app, err := c.render(tree, p)
		if err != nil {
			return nil, err
		}
		apps = append(apps, app)
	}
	if partial != nil {
		return apps, partial.err
	}
	return apps, nil
}

// generatorTemplate is a generator's own template override, if any.
func generatorTemplate(g *Generator) *Template {
	switch {
	case g.List != nil:
		return g.List.Template
	case g.Clusters != nil:
		return g.Clusters.Template
	case g.Git != nil:
		return g.Git.Template
	case g.Matrix != nil:
		return g.Matrix.Template
	case g.Merge != nil:
		return g.Merge.Template
	case g.SCMProvider != nil:
		return g.SCMProvider.Template
	case g.PullRequest != nil:
		return g.PullRequest.Template
	case g.ClusterDecisionResource != nil:
		return g.ClusterDecisionResource.Template
	case g.Plugin != nil:
		return g.Plugin.Template
	}
	return nil
}

// render turns one parameter set into an Application manifest.
func (c *genCtx) render(tree map[string]any, p Params) (*unstructured.Unstructured, error) {
	out, err := c.tmpl.renderTree(tree, p)
	if err != nil {
		return nil, &appError{app: nameHint(tree, p, c.tmpl), err: err}
	}
	m := out.(map[string]any)
	if c.set.Spec.TemplatePatch != nil {
		patch, err := c.tmpl.renderString(*c.set.Spec.TemplatePatch, p)
		if err != nil {
			return nil, &appError{app: nameOf(m), err: fmt.Errorf("templatePatch: %w", err)}
		}
		var pm map[string]any
		if err := yamlToMap(patch, &pm); err != nil {
			return nil, &appError{app: nameOf(m), err: fmt.Errorf("templatePatch: %w", err)}
		}
		m = mergePatch(m, pm)
	}
	meta, _ := m["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	if ns, _ := meta["namespace"].(string); ns == "" && c.set.Namespace != "" {
		meta["namespace"] = c.set.Namespace
	}
	obj := map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": meta}
	if spec, ok := m["spec"]; ok {
		obj["spec"] = spec
	}
	name := nameOf(obj)
	if errs := validateName(name); len(errs) > 0 {
		return nil, &appError{app: name, err: fmt.Errorf("%w: metadata.name: %s", ErrInvalidApplication, strings.Join(errs, "; "))}
	}
	if c.r.opts.Validate != nil {
		if err := c.r.opts.Validate(obj); err != nil {
			return nil, &appError{app: name, err: fmt.Errorf("%w: %v", ErrInvalidApplication, err)}
		}
	}
	return &unstructured.Unstructured{Object: obj}, nil
}

func nameOf(m map[string]any) string {
	meta, _ := m["metadata"].(map[string]any)
	n, _ := meta["name"].(string)
	return n
}

// nameHint is the Application's name for an error message, rendered on a
// best-effort basis.
func nameHint(tree map[string]any, p Params, tm *templater) string {
	n := nameOf(tree)
	if r, err := tm.renderString(n, p); err == nil {
		return r
	}
	return n
}

func validateName(name string) []string {
	if name == "" {
		return []string{"is empty"}
	}
	return validation.IsDNS1123Subdomain(name)
}

// params yields a generator's parameter sets, filtered by its selector.
func (c *genCtx) params(ctx context.Context, g *Generator, depth int) ([]Params, error) {
	var ps []Params
	var err error
	switch {
	case g.List != nil:
		ps, err = c.list(g.List)
	case g.Clusters != nil:
		ps, err = c.clusters(ctx, g.Clusters)
	case g.Git != nil:
		ps, err = c.git(ctx, g.Git)
	case g.Matrix != nil:
		ps, err = c.matrix(ctx, g.Matrix, depth)
	case g.Merge != nil:
		ps, err = c.merge(ctx, g.Merge, depth)
	case g.SCMProvider != nil:
		ps, err = c.scmProvider(ctx, g.SCMProvider)
	case g.PullRequest != nil:
		ps, err = c.pullRequest(ctx, g.PullRequest)
	case g.ClusterDecisionResource != nil:
		ps, err = c.clusterDecisionResource(ctx, g.ClusterDecisionResource)
	case g.Plugin != nil:
		ps, err = c.plugin(ctx, g.Plugin)
	default:
		return nil, fmt.Errorf("want exactly one generator kind")
	}
	var partial *partialError
	if err != nil && (depth > 0 || !errors.As(err, &partial)) {
		return nil, err // a partial result counts only at the top level
	}
	if len(ps) > c.r.opts.MaxApplications {
		return nil, fmt.Errorf("%w: %d parameter sets, over the limit of %d", ErrTooMany, len(ps), c.r.opts.MaxApplications)
	}
	if g.Selector == nil {
		return ps, partialOrNil(partial)
	}
	sel, err := metav1.LabelSelectorAsSelector(g.Selector)
	if err != nil {
		return nil, fmt.Errorf("selector: %w", err)
	}
	kept := ps[:0:0]
	for _, p := range ps {
		if sel.Matches(labels.Set(flatParams(p))) {
			kept = append(kept, p)
		}
	}
	return kept, partialOrNil(partial)
}

func partialOrNil(p *partialError) error {
	if p == nil {
		return nil
	}
	return p
}
