package render_test

import (
	"context"
	"errors"
	"testing"
	"testing/fstest"

	"github.com/kubegitops/gitops/cache/store"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/plain"
	"github.com/kubegitops/gitops/render/rendertest"
)

func TestToolsDetectsDispatchesAndCaches(t *testing.T) {
	snap := rendertest.NewSnapshot(fstest.MapFS{
		"plain/cm.yaml":          file("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p\n"),
		"chart/Chart.yaml":       file("apiVersion: v2\nname: c\nversion: 0.1.0\n"),
		"chart/templates/x.yaml": file("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"),
	})
	tools := render.Tools{render.KindPlain: plain.New(plain.DefaultOptions())}
	c := render.Cached(tools, store.NewMemory(store.MemoryOptions{}), render.CacheOptions{})
	objs, err := c.Render(context.Background(), render.Input{FS: snap, Path: "plain"})
	if err != nil || len(objs) != 1 || objs[0].GetName() != "p" {
		t.Fatalf("plain through Tools: %v, %v", objs, err)
	}
	_, err = c.Render(context.Background(), render.Input{FS: snap, Path: "chart"})
	var re *render.Error
	if !errors.Is(err, render.ErrNoRenderer) || !errors.As(err, &re) || re.Tool != render.KindHelm {
		t.Fatalf("chart without a Helm renderer: %v, want ErrNoRenderer naming helm", err)
	}
}
