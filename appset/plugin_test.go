package appset

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// pluginServer is a plugin service as Argo CD's docs describe one: it
// answers POST /api/v1/getparams.execute with Bearer token, echoing what
// it was sent so the test can see it.
type pluginServer struct {
	*httptest.Server
	mu    sync.Mutex
	calls []pluginRequest
	// answer is the output parameters it returns.
	answer []map[string]any
	status int
}

func newPluginServer(t *testing.T, token string) *pluginServer {
	ps := &pluginServer{status: http.StatusOK}
	ps.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		if r.Method != http.MethodPost || r.URL.Path != PluginPath {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		var req pluginRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		ps.mu.Lock()
		ps.calls = append(ps.calls, req)
		answer, status := ps.answer, ps.status
		ps.mu.Unlock()
		if status != http.StatusOK {
			http.Error(w, "plugin broke", status)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"output": map[string]any{"parameters": answer}})
	}))
	t.Cleanup(ps.Close)
	return ps
}

func pluginObjects(baseURL, tokenRef string, secrets map[string]*corev1.Secret) StaticObjects {
	return StaticObjects{
		ConfigMaps: map[string]map[string]string{"argocd/my-plugin": {"baseUrl": baseURL, "token": tokenRef, "requestTimeout": "5"}},
		Secrets:    secrets,
	}
}

const pluginSet = header + `  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - plugin:
      configMapRef: {name: my-plugin}
      input:
        parameters:
          key1: "value1"
          list: ["list", "of", "values"]
          boolean: true
          map: {key1: "value1"}
      values: {value1: something}
      requeueAfterSeconds: 30
  template:
    metadata:
      name: 'app-{{.name}}'
      annotations:
        from.input: '{{ index .generator.input.parameters.map "key1" }}'
        from.values: '{{ .values.value1 }}'
        from.plugin: '{{ .nested.answer }}'
    spec: {destination: {server: x}}
`

// TestPluginGenerator: the docs' plugin generator (configMapRef, input,
// values, requeueAfterSeconds) POSTs its input to the plugin named by the
// ConfigMap with the token of argocd-secret, and each answered parameter
// set becomes an Application, with generator.input.parameters and values.
func TestPluginGenerator(t *testing.T) {
	ps := newPluginServer(t, "strong-password")
	ps.answer = []map[string]any{{"name": "one", "nested": map[string]any{"answer": "42"}}, {"name": "two", "nested": map[string]any{"answer": "43"}}}
	opts := DefaultOptions()
	opts.Objects = pluginObjects(ps.URL, "$plugin.myplugin.token", map[string]*corev1.Secret{
		"argocd/argocd-secret": {Data: map[string][]byte{"plugin.myplugin.token": []byte("strong-password")}},
	})
	set := loadOne(t, pluginSet)
	res := generate(t, set, opts)
	if got := strings.Join(names(res.Applications), ","); got != "app-one,app-two" {
		t.Fatalf("apps = %s", got)
	}
	a := res.Applications[1]
	for k, want := range map[string]string{"from.input": "value1", "from.values": "something", "from.plugin": "43"} {
		if got := a.GetAnnotations()[k]; got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if len(ps.calls) != 1 || ps.calls[0].ApplicationSetName != set.Name || string(ps.calls[0].Input.Parameters["boolean"]) != "true" {
		t.Fatalf("plugin got %+v", ps.calls)
	}
	if d := RequeueAfter(set.Spec.Generators); d.Seconds() != 30 {
		t.Errorf("requeue after = %v, want 30s", d)
	}
}

// TestPluginGeneratorOtherSecretAndFlat: "$secret:key" reads the token
// from another Secret; outside goTemplate the answer is flattened.
func TestPluginGeneratorOtherSecretAndFlat(t *testing.T) {
	ps := newPluginServer(t, "s3cr3t")
	ps.answer = []map[string]any{{"name": "one", "nested": map[string]any{"answer": 7}}}
	opts := DefaultOptions()
	opts.Objects = pluginObjects(ps.URL, "$another-secret:plugin.token", map[string]*corev1.Secret{
		"argocd/another-secret": {Data: map[string][]byte{"plugin.token": []byte("s3cr3t\n")}},
	})
	res := generate(t, loadOne(t, header+`  generators:
  - plugin:
      configMapRef: {name: my-plugin}
      input: {parameters: {env: prod}}
  template:
    metadata: {name: 'app-{{name}}-{{nested.answer}}-{{generator.input.parameters.env}}'}
    spec: {destination: {server: x}}
`), opts)
	if got := strings.Join(names(res.Applications), ","); got != "app-one-7-prod" {
		t.Fatalf("apps = %s", got)
	}
}

// TestPluginGeneratorFailures: a plugin refusing the token, failing, or a
// ConfigMap without baseUrl fails the generator with a *PluginError naming
// the ConfigMap, never the token; the last good Applications stay.
func TestPluginGeneratorFailures(t *testing.T) {
	ps := newPluginServer(t, "right-token")
	ps.answer = []map[string]any{{"name": "one", "nested": map[string]any{"answer": "1"}}}
	secrets := map[string]*corev1.Secret{"argocd/argocd-secret": {Data: map[string][]byte{"t": []byte("right-token")}}}
	opts := DefaultOptions()
	opts.Objects = pluginObjects(ps.URL, "$t", secrets)
	set := loadOne(t, pluginSet)
	r := NewRunner(opts)
	if _, err := r.Generate(context.Background(), set); err != nil {
		t.Fatal(err)
	}
	ps.mu.Lock()
	ps.status = http.StatusInternalServerError
	ps.mu.Unlock()
	res, err := r.Generate(context.Background(), set)
	var pe *PluginError
	if !errors.As(err, &pe) || pe.Status != http.StatusInternalServerError || pe.ConfigMap != "argocd/my-plugin" || !strings.Contains(err.Error(), "plugin broke") {
		t.Fatalf("err = %v, want a PluginError with HTTP 500", err)
	}
	if len(res.Applications) != 1 || !res.Generators[0].Stale {
		t.Fatalf("last good output not kept: %v", names(res.Applications))
	}

	secrets["argocd/argocd-secret"] = &corev1.Secret{Data: map[string][]byte{"t": []byte("wrong-token")}}
	_, err = Generate(context.Background(), set, opts)
	if !errors.As(err, &pe) || pe.Status != http.StatusForbidden || strings.Contains(err.Error(), "wrong-token") {
		t.Fatalf("err = %v, want HTTP 403 without the token", err)
	}

	opts.Objects = StaticObjects{ConfigMaps: map[string]map[string]string{"argocd/my-plugin": {"token": "$t"}}, Secrets: secrets}
	_, err = Generate(context.Background(), set, opts)
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "baseUrl") {
		t.Fatalf("err = %v, want baseUrl missing", err)
	}
	opts.Objects = nil
	if _, err = Generate(context.Background(), set, opts); !errors.Is(err, ErrNoProvider) {
		t.Fatalf("err = %v, want ErrNoProvider", err)
	}
}
