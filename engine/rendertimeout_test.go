package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/render"
)

// blockingRenderer renders nothing until its context ends.
type blockingRenderer struct{}

func (blockingRenderer) Render(ctx context.Context, _ render.Input) ([]*unstructured.Unstructured, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestRenderTimeoutNamesTheApp(t *testing.T) {
	opts := DefaultOptions()
	opts.Clusters = []ClusterConfig{{Name: "offline", Server: "https://offline.invalid"}}
	opts.Renderers = map[render.Kind]render.Renderer{render.KindPlain: blockingRenderer{}}
	opts.RenderTimeout = 200 * time.Millisecond
	e, err := newWithBuiltins(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	app := dirApp("slow", repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"}), "default")
	app.Spec.Destination.Server = "https://offline.invalid"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, _, err = e.Render(ctx, app)
	var te *RenderTimeoutError
	if !errors.As(err, &te) || te.App != "slow" || te.Timeout != opts.RenderTimeout || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("render past the timeout: %T %v, want a *RenderTimeoutError naming app slow", err, err)
	}
	if !strings.Contains(err.Error(), "application slow") {
		t.Errorf("error %q does not name the app", err)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("render returned after %s", took)
	}
}
