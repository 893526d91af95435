package appset

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// matrix combines two generators: for each parameter set of one, the
// other (its fields rendered with that set, so that it may use the
// first's parameters) yields sets that are joined with it. As in Argo CD
// the second generator may use the first's parameters; when only the first
// is templated, the roles swap (the first may use the second's). Two
// generators that both use templates would each need the other's output
// first: ErrTemplateLoop.
func (c *genCtx) matrix(ctx context.Context, m *MatrixGenerator, depth int) ([]Params, error) {
	if depth >= v1alpha1.MaxGeneratorNesting {
		return nil, fmt.Errorf("%w: matrix nested more than %d levels", ErrTemplateLoop, v1alpha1.MaxGeneratorNesting)
	}
	if len(m.Generators) != 2 {
		return nil, fmt.Errorf("a matrix combines exactly two generators, got %d", len(m.Generators))
	}
	raws := make([][]byte, 2)
	templated := make([]bool, 2)
	for i := range m.Generators {
		raw, err := json.Marshal(&m.Generators[i])
		if err != nil {
			return nil, err
		}
		raws[i], templated[i] = raw, strings.Contains(string(raw), "{{")
	}
	outer, inner := 0, 1
	switch {
	case templated[0] && templated[1]:
		return nil, fmt.Errorf("%w: both matrix generators use parameters; only one may use the other's", ErrTemplateLoop)
	case templated[0]:
		outer, inner = 1, 0
	}
	first, err := c.params(ctx, &m.Generators[outer], depth+1)
	if err != nil {
		return nil, fmt.Errorf("matrix.generators[%d]: %w", outer, err)
	}
	var fixed []Params
	if !templated[inner] {
		if fixed, err = c.params(ctx, &m.Generators[inner], depth+1); err != nil {
			return nil, fmt.Errorf("matrix.generators[%d]: %w", inner, err)
		}
	}
	var out []Params
	for _, a := range first {
		bs := fixed
		if templated[inner] {
			g, err := c.interpolate(raws[inner], a)
			if err != nil {
				return nil, fmt.Errorf("matrix.generators[%d]: %w", inner, err)
			}
			if bs, err = c.params(ctx, g, depth+1); err != nil {
				return nil, fmt.Errorf("matrix.generators[%d]: %w", inner, err)
			}
		}
		for _, b := range bs {
			x, y := a, b
			if outer == 1 {
				x, y = b, a
			}
			p, err := c.combine(x, y)
			if err != nil {
				return nil, fmt.Errorf("matrix: %w", err)
			}
			out = append(out, p)
			if len(out) > c.r.opts.MaxApplications {
				return nil, fmt.Errorf("%w: matrix over %d parameter sets", ErrTooMany, c.r.opts.MaxApplications)
			}
		}
	}
	return out, nil
}

// interpolate renders a generator's fields with a parameter set.
func (c *genCtx) interpolate(raw []byte, p Params) (*Generator, error) {
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return nil, err
	}
	out, err := c.tmpl.renderTree(tree, p)
	if err != nil {
		return nil, err
	}
	js, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	var g Generator
	if err := json.Unmarshal(js, &g); err != nil {
		return nil, err
	}
	return &g, nil
}

// combine joins two parameter sets. Under fasttemplate a key both have
// with different values is an error (as in Argo CD); under goTemplate
// maps merge and the second set's values win.
func (c *genCtx) combine(a, b Params) (Params, error) {
	out := cloneParams(a)
	if c.tmpl.goTemplate {
		return deepMerge(out, b), nil
	}
	for k, v := range b {
		if old, ok := out[k]; ok && stringOf(old) != stringOf(v) {
			return nil, fmt.Errorf("parameter %q has two values, %q and %q", k, stringOf(old), stringOf(v))
		}
		out[k] = v
	}
	return out, nil
}

func deepMerge(dst, src Params) Params {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				dst[k] = deepMerge(cloneParams(dm), sm)
				continue
			}
		}
		dst[k] = v
	}
	return dst
}

// merge joins the first generator's sets with the sets of the others
// that have the same values of every merge key: their parameters override
// the first's. Sets of later generators matching nothing are dropped;
// two sets of the first generator with the same key are an error.
func (c *genCtx) merge(ctx context.Context, m *MergeGenerator, depth int) ([]Params, error) {
	if depth >= v1alpha1.MaxGeneratorNesting {
		return nil, fmt.Errorf("%w: merge nested more than %d levels", ErrTemplateLoop, v1alpha1.MaxGeneratorNesting)
	}
	if len(m.Generators) < 2 || len(m.MergeKeys) == 0 {
		return nil, fmt.Errorf("a merge needs two generators and a merge key")
	}
	base, err := c.params(ctx, &m.Generators[0], depth+1)
	if err != nil {
		return nil, fmt.Errorf("merge.generators[0]: %w", err)
	}
	index := map[string]int{}
	for i, p := range base {
		k := c.mergeKey(p, m.MergeKeys)
		if _, dup := index[k]; dup {
			return nil, fmt.Errorf("merge.generators[0]: two parameter sets with merge key %s", k)
		}
		index[k] = i
	}
	out := make([]Params, len(base))
	for i, p := range base {
		out[i] = cloneParams(p)
	}
	for gi := 1; gi < len(m.Generators); gi++ {
		ps, err := c.params(ctx, &m.Generators[gi], depth+1)
		if err != nil {
			return nil, fmt.Errorf("merge.generators[%d]: %w", gi, err)
		}
		seen := map[string]bool{}
		for _, p := range ps {
			k := c.mergeKey(p, m.MergeKeys)
			if seen[k] {
				return nil, fmt.Errorf("merge.generators[%d]: two parameter sets with merge key %s", gi, k)
			}
			seen[k] = true
			if i, ok := index[k]; ok {
				out[i] = deepMerge(out[i], p)
			}
		}
	}
	return out, nil
}

// mergeKey is the values of the merge keys of p (flattened keys, so
// "path.basename" works under goTemplate too).
func (c *genCtx) mergeKey(p Params, keys []string) string {
	flat := flatParams(p)
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = k + "=" + flat[k]
	}
	js, _ := json.Marshal(vals)
	return string(js)
}
