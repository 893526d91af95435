package recipes

import (
	"context"
	"path"
	"regexp"

	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// EnvsubstPlugin is the plugin name Applications give to be rendered by
// Envsubst: spec.source.plugin.name: envsubst.
const EnvsubstPlugin = "envsubst"

// Envsubst renders the *.yaml files of an application directory after
// replacing ${NAME} with the plugin's env entries, ${ARGOCD_APP_NAME} and
// ${ARGOCD_APP_NAMESPACE}; unknown names are left as they are. Register it
// as Options.Renderers[render.KindPlugin]: the engine picks the plugin tool
// for every app with spec.source.plugin, and Envsubst passes the apps of
// other plugins to Next.
type Envsubst struct {
	// Next renders the apps of other plugins; nil refuses them.
	Next render.Renderer
}

var placeholder = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*\}`)

// Render implements render.Renderer.
func (e Envsubst) Render(ctx context.Context, in render.Input) ([]*unstructured.Unstructured, error) {
	if in.Plugin == nil || in.Plugin.Name != EnvsubstPlugin {
		if e.Next == nil {
			return nil, render.Wrap(render.KindPlugin, in, render.ErrNoRenderer)
		}
		return e.Next.Render(ctx, in)
	}
	objs, err := envsubst(in)
	return objs, render.Wrap(render.KindPlugin, in, err) // names the tool and the app
}

func envsubst(in render.Input) ([]*unstructured.Unstructured, error) {
	vars := map[string]string{"ARGOCD_APP_NAME": in.AppName, "ARGOCD_APP_NAMESPACE": in.Namespace}
	for k, v := range in.Plugin.Env {
		vars[k] = v
	}
	root := render.NewRoot(in.FS, render.DefaultLimits()) // no escapes from the repo, bounded reads
	entries, err := root.ReadDir(in.Path)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, entry := range entries { // sorted by name
		if entry.IsDir() || path.Ext(entry.Name()) != ".yaml" {
			continue
		}
		name := path.Join(in.Path, entry.Name())
		data, err := root.ReadFile(name)
		if err != nil {
			return nil, err
		}
		data = placeholder.ReplaceAllFunc(data, func(m []byte) []byte {
			if v, ok := vars[string(m[2:len(m)-1])]; ok {
				return []byte(v)
			}
			return m
		})
		objs, err := resource.Decode(name, data, root.Limits().Decode) // errors name file and line
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// Identity implements render.Identifier, without which the engine's render
// cache does not cache a renderer: the key covers the Identity, the Input
// (plugin env included) and the content of the files read.
func (e Envsubst) Identity(in render.Input) (render.Identity, error) {
	if in.Plugin != nil && in.Plugin.Name == EnvsubstPlugin {
		return render.Identity{Tool: render.KindPlugin, Version: "envsubst/v1"}, nil
	}
	if id, ok := e.Next.(render.Identifier); ok {
		return id.Identity(in)
	}
	return render.Identity{}, render.Wrap(render.KindPlugin, in, render.ErrNoRenderer)
}
