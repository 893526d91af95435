package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	gosync "sync"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/helm"
	"github.com/kubegitops/gitops/render/jsonnet"
	"github.com/kubegitops/gitops/render/kustomize"
	"github.com/kubegitops/gitops/render/plain"
	"github.com/kubegitops/gitops/render/plugin"
	"github.com/kubegitops/gitops/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// runRender prints an application's rendered manifests as a YAML stream.
// It renders through the engine (a Refresh), so the output is exactly what
// the engine compares and syncs: same source options, same cluster version
// and API versions for Helm.
func runRender(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cmd appCommand
	cmd.register(fs)
	showSecrets := fs.Bool("show-secrets", false, "print the values of Secrets (masked by default)")
	var off offlineFlags
	off.register(fs)
	if !parseFlags(fs, args) {
		return 2
	}
	rec := &recorder{}
	offline, err := off.setupMaybeOffline(stderr, &cmd, func(o *gitops.Options) { o.Renderers = rec.tools() })
	defer cmd.Close()
	if err != nil {
		return fail(stderr, "render", err)
	}
	rec.deps.e = cmd.engine
	var objs []*unstructured.Unstructured
	if offline {
		// Nothing to compare with: the engine's Render is the whole job.
		if objs, _, err = cmd.engine.Render(ctx, cmd.app); err != nil {
			return fail(stderr, "render", err)
		}
	} else {
		_, err = cmd.engine.Refresh(ctx, cmd.app)
		// Every source must have rendered: a partial stream would pass for
		// the whole app. A later failure (comparing with the cluster) does
		// not make the rendered manifests wrong; it is reported as a
		// warning.
		if rendered, want := rec.renders(), renderedSources(cmd.app); rendered < want {
			if err == nil {
				err = fmt.Errorf("%s: %d of %d sources rendered", cmd.app.Name, rendered, want)
			}
			return fail(stderr, "render", err)
		}
		if err != nil {
			fmt.Fprintf(stderr, "gitopsctl render: warning: %v\n", err)
		}
		objs = rec.objects()
	}
	for _, obj := range objs {
		if !*showSecrets {
			maskSecret(obj)
		}
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			return fail(stderr, "render", err)
		}
		fmt.Fprintf(stdout, "---\n%s", data)
	}
	return 0
}

// renderedSources counts the sources that render objects: a source with
// only a ref provides files to the others.
func renderedSources(app *gitops.Application) int {
	n := 0
	for _, src := range app.Spec.AllSources() {
		if src.Ref == "" || src.Path != "" || src.Chart != "" {
			n++
		}
	}
	return n
}

// recorder wraps the built-in renderers and keeps what they render, in the
// order the engine asked (one source after another).
type recorder struct {
	mu   gosync.Mutex
	objs []*unstructured.Unstructured
	done int // renders that succeeded
	// deps fetches chart dependencies through the engine, once it exists.
	deps lateDependencies
}

// lateDependencies is the engine's dependency fetcher, set once the
// engine is built (the renderers are built before it).
type lateDependencies struct{ e *gitops.Engine }

// FetchDependency implements helm.DependencyFetcher.
func (l *lateDependencies) FetchDependency(ctx context.Context, req helm.DependencyRequest) ([]byte, error) {
	if l.e == nil {
		return nil, fmt.Errorf("dependency %s: no engine yet", req.Name)
	}
	return l.e.Sources().ChartDependencies().FetchDependency(ctx, req)
}

func (r *recorder) tools() map[render.Kind]render.Renderer {
	hopts := helm.DefaultOptions()
	hopts.Dependencies = &r.deps
	return map[render.Kind]render.Renderer{
		render.KindPlain:     &recording{r, plain.New(plain.DefaultOptions())},
		render.KindKustomize: &recording{r, kustomize.New(kustomize.DefaultOptions())},
		render.KindHelm:      &recording{r, helm.New(hopts)},
		render.KindJsonnet:   &recording{r, jsonnet.New(jsonnet.DefaultOptions())},
		render.KindPlugin:    &recording{r, plugin.New(plugin.DefaultOptions())},
	}
}

func (r *recorder) renders() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done
}

func (r *recorder) objects() []*unstructured.Unstructured {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*unstructured.Unstructured(nil), r.objs...)
}

// recording is one tool's renderer that reports its output to a recorder.
type recording struct {
	rec  *recorder
	next render.Renderer
}

// Render renders with the wrapped tool and keeps a copy of the objects.
func (r *recording) Render(ctx context.Context, in render.Input) ([]*unstructured.Unstructured, error) {
	objs, err := r.next.Render(ctx, in)
	if err != nil {
		return nil, err
	}
	r.rec.mu.Lock()
	r.rec.done++
	for _, o := range objs {
		r.rec.objs = append(r.rec.objs, o.DeepCopy())
	}
	r.rec.mu.Unlock()
	return objs, nil
}

// Identity is the wrapped tool's, so that the engine's render cache
// accepts the wrapper.
func (r *recording) Identity(in render.Input) (render.Identity, error) {
	id, ok := r.next.(render.Identifier)
	if !ok {
		return render.Identity{}, fmt.Errorf("renderer %T is not an Identifier", r.next)
	}
	return id.Identity(in)
}

// secretMask replaces each value of a Secret, as Argo CD shows them.
const secretMask = "++++++++"

// maskSecret hides the values of a core Secret (data, stringData and a
// last-applied copy of them); other objects are left alone.
func maskSecret(obj *unstructured.Unstructured) {
	if obj.GetAPIVersion() != "v1" || obj.GetKind() != "Secret" {
		return
	}
	for _, field := range []string{"data", "stringData"} {
		m, ok := obj.Object[field].(map[string]any)
		if !ok {
			continue
		}
		for k := range m {
			m[k] = secretMask
		}
	}
	if ann := obj.GetAnnotations(); ann != nil {
		if _, ok := ann[resource.AnnotationLastApplied]; ok {
			ann[resource.AnnotationLastApplied] = secretMask
			obj.SetAnnotations(ann)
		}
	}
}
