package recipes

import (
	"context"
	"errors"
	"testing"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/plugin"
	"github.com/kubegitops/gitops/resource"
)

const envsubstApp = `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: greeter}
spec:
  source:
    repoURL: REPO
    path: app
    plugin:
      name: PLUGIN
      env: [{name: GREETING, value: hello}]
  destination: {server: https://kubernetes.default.svc, namespace: greet}
`

// Envsubst renders through the engine: placeholders filled from the
// plugin env and the app, unknown ones kept, other plugins passed on.
func TestEnvsubstThroughEngine(t *testing.T) {
	repo := writeRepo(t, map[string]string{
		"app/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${ARGOCD_APP_NAME}-config\ndata:\n  greeting: ${GREETING}\n  namespace: ${ARGOCD_APP_NAMESPACE}\n  shell: ${HOME}\n",
		"app/README.md":      "not a manifest: ${GREETING}",
	})
	e := newEngine(t, func(o *gitops.Options) {
		o.Renderers = map[render.Kind]render.Renderer{
			render.KindPlugin: Envsubst{Next: plugin.New(plugin.DefaultOptions())},
		}
	})
	app := loadApp(t, envsubstApp, repo)
	app.Spec.Source.Plugin.Name = EnvsubstPlugin
	objs, _, err := e.Render(context.Background(), app)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].GetName() != "greeter-config" {
		t.Fatalf("rendered %d objects, first %v", len(objs), objs)
	}
	data := objs[0].Object["data"].(map[string]any)
	if data["greeting"] != "hello" || data["namespace"] != "greet" || data["shell"] != "${HOME}" {
		t.Errorf("data = %v", data)
	}

	// Another plugin goes to Next, the built-in plugin renderer, which
	// knows no plugin here.
	app.Spec.Source.Plugin.Name = "cmp-tool"
	_, _, err = e.Render(context.Background(), app)
	if !errors.Is(err, plugin.ErrUnknownPlugin) {
		t.Errorf("other plugin: err = %v, want plugin.ErrUnknownPlugin", err)
	}

	// A manifest that does not decode is an error naming the file.
	repo = writeRepo(t, map[string]string{"app/bad.yaml": "kind: ConfigMap\nmetadata: {name: x}\n"})
	app = loadApp(t, envsubstApp, repo)
	app.Spec.Source.Plugin.Name = EnvsubstPlugin
	_, _, err = e.Render(context.Background(), app)
	var de *resource.DecodeError
	if !errors.As(err, &de) || de.File != "app/bad.yaml" {
		t.Errorf("bad manifest: err = %v, want a DecodeError naming app/bad.yaml", err)
	}
}
