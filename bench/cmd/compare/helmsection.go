package main

import (
	"context"
	"fmt"
	"github.com/kubegitops/gitops/internal/benchdata"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kubegitops/gitops/cache/store"
	"github.com/kubegitops/gitops/internal/reftools"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/helm"
	"github.com/kubegitops/gitops/render/rendertest"
)

// helmSection renders one chart in-process (the first render of the
// process, uncached renders, cache hits) and with `helm template` (the
// first invocation and later ones), and compares.
func (h *harness) helmSection(ctx context.Context) ([]Row, error) {
	bin, err := reftools.Path(ctx, reftools.Helm)
	if err != nil {
		return nil, err
	}
	n := h.cfg.HelmTemplates
	files := benchdata.HelmChart("big", n)
	dir, err := os.MkdirTemp("", "bench-helm-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	for name, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return nil, err
		}
	}
	// Ours reads the chart from an in-memory snapshot, as it reads a Git
	// snapshot; the binary reads it from disk (in the page cache).
	snap := rendertest.NewSnapshot(files)
	in := render.Input{FS: snap, Path: "big", AppName: "big", Namespace: "ns", KubeVersion: "1.37.2"}
	renderer := helm.New(helm.DefaultOptions())
	renderOurs := func(r render.Renderer) (time.Duration, error) {
		start := time.Now()
		objs, err := r.Render(ctx, in)
		if err != nil {
			return 0, err
		}
		if len(objs) != n {
			return 0, fmt.Errorf("in-process render returned %d objects, want %d", len(objs), n)
		}
		return time.Since(start), nil
	}
	home, err := os.MkdirTemp("", "bench-helm-home-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(home)
	renderBinary := func() (time.Duration, error) {
		cmd := exec.CommandContext(ctx, bin, "template", "big", filepath.Join(dir, "big"), "--namespace", "ns", "--kube-version", "1.37.2")
		cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
		start := time.Now()
		out, err := cmd.Output()
		d := time.Since(start)
		if err != nil || len(out) == 0 {
			return 0, fmt.Errorf("helm template: %v", err)
		}
		return d, nil
	}

	// Cold: a fresh process renders the chart once, from disk: this
	// harness re-executed (process start, every package's init, one
	// render) against one `helm template`.
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	renderFresh := func() (time.Duration, error) {
		cmd := exec.CommandContext(ctx, self)
		cmd.Env = append(os.Environ(), helmOnceEnv+"="+dir)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(start)
		if err != nil {
			return 0, fmt.Errorf("rendering in a fresh process: %v: %s", err, out)
		}
		if want := fmt.Sprintf("%d objects", n); strings.TrimSpace(string(out)) != want {
			return 0, fmt.Errorf("rendering in a fresh process printed %q, want %q", out, want)
		}
		return d, nil
	}
	// One of each first, so that both programs are in the page cache and
	// neither figure measures the disk.
	if _, err := renderOurs(renderer); err != nil {
		return nil, err
	}
	if _, err := renderFresh(); err != nil {
		return nil, err
	}
	if _, err := renderBinary(); err != nil {
		return nil, err
	}
	cached := render.Cached(renderer, store.NewMemory(store.MemoryOptions{}), render.CacheOptions{})
	if _, err := renderOurs(cached); err != nil {
		return nil, err
	}
	runs := max(h.cfg.HelmRuns, 1)
	var fresh, uncached, warm, bin2 []time.Duration
	for range h.cfg.Repeat {
		for range runs {
			d, err := renderFresh()
			if err != nil {
				return nil, err
			}
			fresh = append(fresh, d)
			if d, err = renderOurs(renderer); err != nil {
				return nil, err
			}
			uncached = append(uncached, d)
			if d, err = renderOurs(cached); err != nil {
				return nil, err
			}
			warm = append(warm, d)
			if d, err = renderBinary(); err != nil {
				return nil, err
			}
			bin2 = append(bin2, d)
		}
	}
	binMs := medianDuration(bin2) * 1e3
	h.logf("helm: fresh process %.2f ms; uncached %.2f ms, cached %.3f ms; binary %.2f ms",
		medianDuration(fresh)*1e3, medianDuration(uncached)*1e3, medianDuration(warm)*1e3, binMs)
	label := "helm template (v3.22.0 binary)"
	measure := func(s string) string { return fmt.Sprintf("%s, %d-template chart", s, n) }
	return []Row{
		{Section: "helm", Measure: measure("cold: a fresh process renders once"), Ours: medianDuration(fresh) * 1e3, Theirs: binMs, TheirName: label, Unit: Millis},
		{Section: "helm", Measure: measure("render in a running process, no cache"), Ours: medianDuration(uncached) * 1e3, Theirs: binMs, TheirName: label, Unit: Millis},
		{Section: "helm", Measure: measure("warm: cache hit"), Ours: medianDuration(warm) * 1e3, Theirs: binMs, TheirName: label, Unit: Millis, Target: "under 1 ms (issue 4)"},
	}, nil
}

// helmOnceEnv, set to a folder holding the chart "big", makes the harness
// render that chart once in process, print the number of objects and exit:
// the cold figure of the Helm section re-executes the harness with it.
const helmOnceEnv = "GITOPS_BENCH_HELM_ONCE"

// helmOnce renders dir/big once and returns the exit code.
func helmOnce(dir string) int {
	in := render.Input{FS: os.DirFS(dir), Path: "big", AppName: "big", Namespace: "ns", KubeVersion: "1.37.2"}
	objs, err := helm.New(helm.DefaultOptions()).Render(context.Background(), in)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("%d objects\n", len(objs))
	return 0
}
