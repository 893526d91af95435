package appset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// PluginPath is the path a plugin generator POSTs to, after the
// ConfigMap's baseUrl.
const PluginPath = "/api/v1/getparams.execute"

// DefaultPluginTimeout bounds a plugin request when the ConfigMap sets no
// requestTimeout (Argo CD's 30 seconds).
const DefaultPluginTimeout = 30 * time.Second

// maxPluginResponse bounds what a plugin may answer.
const maxPluginResponse = 16 << 20

// ArgoCDSecret is the Secret a plugin token "$key" names a key of.
const ArgoCDSecret = "argocd-secret"

// PluginError is a plugin generator's failure talking to its plugin,
// naming the ConfigMap; it never holds the token.
type PluginError struct {
	// ConfigMap is the plugin's ConfigMap (namespace/name).
	ConfigMap string
	// Status is the plugin's HTTP status (0 when none came back).
	Status int
	// Err is the cause.
	Err error
}

// Error implements error.
func (e *PluginError) Error() string {
	s := "plugin " + e.ConfigMap
	if e.Status != 0 {
		s += fmt.Sprintf(": HTTP %d", e.Status)
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *PluginError) Unwrap() error { return e.Err }

// pluginRequest is the body a plugin receives, as Argo CD sends it.
type pluginRequest struct {
	ApplicationSetName string `json:"applicationSetName"`
	Input              struct {
		Parameters map[string]json.RawMessage `json:"parameters"`
	} `json:"input"`
}

// pluginResponse is what a plugin answers.
type pluginResponse struct {
	Output struct {
		Parameters []map[string]any `json:"parameters"`
	} `json:"output"`
}

// plugin asks the plugin service the ConfigMap names for parameter sets:
// POST baseUrl + PluginPath with {applicationSetName, input: {parameters}}
// and "Authorization: Bearer <token>", bounded by requestTimeout. Each
// answered parameter set is kept as it is under goTemplate and flattened
// ("a.b", every leaf a string) otherwise, with
// generator.input.parameters (the generator's input) and values added.
func (c *genCtx) plugin(ctx context.Context, g *PluginGenerator) ([]Params, error) {
	o := c.r.opts
	if o.Objects == nil {
		return nil, fmt.Errorf("%w: no cluster to read the plugin's ConfigMap from", ErrNoProvider)
	}
	cmID := o.ControllerNamespace + "/" + g.ConfigMapRef.Name
	cm, err := o.Objects.ConfigMap(ctx, o.ControllerNamespace, g.ConfigMapRef.Name)
	if err != nil {
		return nil, &PluginError{ConfigMap: cmID, Err: err}
	}
	baseURL, tokenRef := cm["baseUrl"], cm["token"]
	if baseURL == "" {
		return nil, &PluginError{ConfigMap: cmID, Err: errors.New("data.baseUrl is missing")}
	}
	if !strings.HasPrefix(tokenRef, "$") {
		return nil, &PluginError{ConfigMap: cmID, Err: errors.New("data.token is empty or does not name a Secret key starting with '$'")}
	}
	timeout := DefaultPluginTimeout
	if s, ok := cm["requestTimeout"]; ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return nil, &PluginError{ConfigMap: cmID, Err: fmt.Errorf("data.requestTimeout %q: want seconds", s)}
		}
		if n > 0 {
			timeout = time.Duration(n) * time.Second
		}
	}
	token, err := c.pluginToken(ctx, tokenRef)
	if err != nil {
		return nil, &PluginError{ConfigMap: cmID, Err: err}
	}
	found, status, err := callPlugin(ctx, o.HTTPClient, baseURL, token, timeout, c.set.Name, g.Input.Parameters)
	if err != nil {
		return nil, &PluginError{ConfigMap: cmID, Status: status, Err: err}
	}
	input := map[string]any{}
	for k, raw := range g.Input.Parameters {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("input.parameters.%s: %w", k, err)
		}
		input[k] = v
	}
	gen := map[string]any{"input": map[string]any{"parameters": input}}
	out := make([]Params, 0, len(found))
	for _, obj := range found {
		p := Params{}
		if c.tmpl.goTemplate {
			for k, v := range obj {
				p[k] = v
			}
			p["generator"] = gen
		} else {
			flatten(p, "", obj)
			flatten(p, "generator", gen)
		}
		if err := c.addValues(p, g.Values); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// pluginToken resolves the ConfigMap's token: "$key" is a key of
// argocd-secret, "$secret:key" a key of that Secret, both in the
// controller's namespace.
func (c *genCtx) pluginToken(ctx context.Context, ref string) (string, error) {
	name, key := ArgoCDSecret, strings.TrimPrefix(ref, "$")
	if s, k, ok := strings.Cut(key, ":"); ok {
		name, key = s, k
	}
	ns := c.r.opts.ControllerNamespace
	sec, err := c.r.opts.Objects.Secret(ctx, ns, name)
	if err != nil {
		return "", fmt.Errorf("token: secret %s/%s: %w", ns, name, err)
	}
	v, ok := sec.Data[key]
	if !ok {
		return "", fmt.Errorf("token: secret %s/%s has no key %q", ns, name, key)
	}
	return strings.TrimSpace(string(v)), nil
}

// callPlugin does one plugin request; the token goes in the header only.
func callPlugin(ctx context.Context, hc *http.Client, baseURL, token string, timeout time.Duration, setName string, params map[string]json.RawMessage) ([]map[string]any, int, error) {
	var body pluginRequest
	body.ApplicationSetName = setName
	body.Input.Parameters = params
	js, err := json.Marshal(body)
	if err != nil {
		return nil, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(baseURL, "/")+PluginPath, bytes.NewReader(js))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxPluginResponse+1))
	if err != nil {
		return nil, resp.StatusCode, err
	}
	if len(data) > maxPluginResponse {
		return nil, resp.StatusCode, fmt.Errorf("answer over %d bytes", maxPluginResponse)
	}
	if resp.StatusCode/100 != 2 {
		return nil, resp.StatusCode, fmt.Errorf("%s", firstLine(data))
	}
	var out pluginResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, resp.StatusCode, fmt.Errorf("answer is not {output: {parameters: [...]}}: %w", err)
	}
	return out.Output.Parameters, resp.StatusCode, nil
}

// firstLine is the start of a body, for an error message.
func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	if s == "" {
		s = "empty answer"
	}
	return s
}
