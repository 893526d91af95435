package helm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"slices"

	"helm.sh/helm/v3/pkg/strvals"
	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops/render"
)

// values merges the user-supplied values in Argo CD's order (the chart's
// own values.yaml is coalesced by Helm underneath them).
func (r *Renderer) values(ctx context.Context, root *render.Root, chartDir string, src render.HelmSource) (map[string]any, error) {
	vals := map[string]any{}
	for _, vf := range src.ValueFiles {
		data, err := r.readValueFile(ctx, root, chartDir, vf)
		if err != nil {
			if src.IgnoreMissingValueFiles && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		if err := render.RefuseEncrypted(vf, data); err != nil {
			return nil, err
		}
		m, err := parseValues(vf, data)
		if err != nil {
			return nil, err
		}
		vals = mergeMaps(vals, m)
	}
	if src.Values != "" {
		m, err := parseValues("inline values", []byte(src.Values))
		if err != nil {
			return nil, err
		}
		vals = mergeMaps(vals, m)
	}
	if len(src.ValuesObject) > 0 {
		vals = mergeMaps(vals, copyValues(src.ValuesObject))
	}
	for _, p := range src.Parameters {
		expr := p.Name + "=" + p.Value
		parse := strvals.ParseInto
		if p.ForceString {
			parse = strvals.ParseIntoString
		}
		if err := parse(expr, vals); err != nil {
			return nil, fmt.Errorf("%w: parameter %q: %v", render.ErrInvalidInput, p.Name, err)
		}
	}
	for _, fp := range src.FileParameters {
		p, err := root.Sub(chartDir, fp.Path)
		if err != nil {
			return nil, err
		}
		data, err := root.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if err := render.RefuseEncrypted(fp.Path, data); err != nil {
			return nil, err
		}
		reader := func([]rune) (any, error) { return string(data), nil }
		if err := strvals.ParseIntoFile(fp.Name+"="+fp.Path, vals, reader); err != nil {
			return nil, fmt.Errorf("%w: file parameter %q: %v", render.ErrInvalidInput, fp.Name, err)
		}
	}
	return vals, nil
}

// readValueFile reads a value file inside the root, or fetches it when its
// scheme is allow-listed.
func (r *Renderer) readValueFile(ctx context.Context, root *render.Root, chartDir, name string) ([]byte, error) {
	scheme := render.URLScheme(name)
	if scheme == "" {
		p, err := root.Sub(chartDir, name)
		if err != nil {
			return nil, err
		}
		return root.ReadFile(p)
	}
	if !slices.Contains(r.opts.AllowedValueSchemes, scheme) || (scheme != "http" && scheme != "https") {
		return nil, &render.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w: %q", render.ErrSchemeNotAllowed, scheme)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, name, nil)
	if err != nil {
		return nil, &render.PathError{Op: "fetch", Path: name, Err: err}
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return nil, &render.PathError{Op: "fetch", Path: name, Err: errors.New("request failed")}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &render.PathError{Op: "fetch", Path: name, Err: fmt.Errorf("status %d", resp.StatusCode)}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, r.opts.Limits.MaxFileBytes+1))
	if err != nil {
		return nil, &render.PathError{Op: "fetch", Path: name, Err: err}
	}
	if int64(len(data)) > r.opts.Limits.MaxFileBytes {
		return nil, &render.PathError{Op: "fetch", Path: name, Err: render.ErrTooLarge}
	}
	return data, nil
}

// parseValues parses a values document; errors name the file and never
// quote its content.
func parseValues(name string, data []byte) (map[string]any, error) {
	m := map[string]any{}
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, &render.PathError{Op: "parse", Path: name, Err: errors.New("not a YAML values document")}
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// mergeMaps merges b into a, recursively for maps, b winning (Helm's
// semantics for successive value files).
func mergeMaps(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if vm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = mergeMaps(am, vm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// copyValues deep-copies a values object so Helm never mutates the Input.
func copyValues(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch t := v.(type) {
		case map[string]any:
			out[k] = copyValues(t)
		case []any:
			s := make([]any, len(t))
			for i, e := range t {
				if em, ok := e.(map[string]any); ok {
					s[i] = copyValues(em)
				} else {
					s[i] = e
				}
			}
			out[k] = s
		default:
			out[k] = v
		}
	}
	return out
}
