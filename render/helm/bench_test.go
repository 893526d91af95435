package helm

import (
	"context"
	"fmt"
	"github.com/kubegitops/gitops/internal/benchdata"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/cache/store"
	"github.com/kubegitops/gitops/internal/reftools"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/rendertest"
)

// BenchmarkChart50 renders a chart of 50 templates: cold is a render
// without cache, warm a hit of the Cached renderer on the same snapshot.
func BenchmarkChart50(b *testing.B) {
	snap := rendertest.NewSnapshot(benchdata.HelmChart("charts/big", 50))
	in := render.Input{FS: snap, Path: "charts/big", AppName: "big", Namespace: "ns", KubeVersion: "1.37.2"}
	r := New(DefaultOptions())
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.Render(context.Background(), in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		c := render.Cached(r, store.NewMemory(store.MemoryOptions{}), render.CacheOptions{})
		if _, err := c.Render(context.Background(), in); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			objs, err := c.Render(context.Background(), in)
			if err != nil || len(objs) != 50 {
				b.Fatal(len(objs), err)
			}
		}
	})
}

// BenchmarkInProcessVsHelmBinary renders the same 50-template chart
// in-process and with `helm template` (v3.22.0 built from the same module).
func BenchmarkInProcessVsHelmBinary(b *testing.B) {
	files := benchdata.HelmChart("big", 50)
	dir := b.TempDir()
	for name, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	in := render.Input{FS: os.DirFS(dir), Path: "big", AppName: "big", Namespace: "ns", KubeVersion: "1.37.2"}
	b.Run("in-process", func(b *testing.B) {
		r := New(DefaultOptions())
		for b.Loop() {
			if _, err := r.Render(context.Background(), in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("helm-template-binary", func(b *testing.B) {
		bin := reftools.ForTest(b, reftools.Helm)
		home := b.TempDir()
		for b.Loop() {
			cmd := exec.Command(bin, "template", "big", filepath.Join(dir, "big"), "--namespace", "ns", "--kube-version", "1.37.2")
			cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
			if out, err := cmd.Output(); err != nil || len(out) == 0 {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkMonorepo100AppsOneChanged: 100 charts in one repository; each
// iteration is a commit that changes one chart's values, then a refresh of
// all 100 apps through the cache. renders/op must be 1.
func BenchmarkMonorepo100AppsOneChanged(b *testing.B) {
	files := fstest.MapFS{}
	for i := 0; i < 100; i++ {
		for k, v := range benchdata.HelmChart(fmt.Sprintf("apps/app%03d", i), 3) {
			files[k] = v
		}
	}
	snap := rendertest.NewSnapshot(files)
	counting := &countingHelm{Renderer: New(DefaultOptions())}
	c := render.Cached(counting, store.NewMemory(store.MemoryOptions{}), render.CacheOptions{})
	refresh := func(s *rendertest.Snapshot) {
		for i := 0; i < 100; i++ {
			if _, err := c.Render(context.Background(), render.Input{FS: s, Path: fmt.Sprintf("apps/app%03d", i), KubeVersion: "1.37.2"}); err != nil {
				b.Fatal(err)
			}
		}
	}
	refresh(snap)
	counting.n = 0
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		app := fmt.Sprintf("apps/app%03d/values.yaml", i%100)
		snap = snap.With(map[string]*fstest.MapFile{app: {Data: []byte(fmt.Sprintf("replicas: %d\nimage: nginx:1.27\nlabels:\n  team: a\n", i+3))}})
		refresh(snap)
	}
	b.ReportMetric(float64(counting.n)/float64(b.N), "renders/op")
	if counting.n != b.N {
		b.Fatalf("%d renders for %d commits: want exactly one per commit", counting.n, b.N)
	}
}

type countingHelm struct {
	*Renderer
	n int
}

func (c *countingHelm) Render(ctx context.Context, in render.Input) (objs []*unstructured.Unstructured, err error) {
	c.n++
	return c.Renderer.Render(ctx, in)
}
