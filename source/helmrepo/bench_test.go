package helmrepo_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubegitops/gitops/cache/store"
	"github.com/kubegitops/gitops/internal/benchdata"
	"github.com/kubegitops/gitops/internal/chartserver"
	"github.com/kubegitops/gitops/internal/reftools"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/helm"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/helmrepo"
)

// bigChart writes benchdata's 50-template chart "big" 0.1.0 as a folder.
func bigChart(b *testing.B) string {
	dir := b.TempDir()
	for name, f := range benchdata.HelmChart("big", 50) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return filepath.Join(dir, "big")
}

// coldRender is what the engine does for a chart app it has never seen:
// a new Source over an empty cache resolves 0.1.x, snapshots and renders.
func coldRender(b *testing.B, repo source.Repository, plainHTTP bool) {
	dir, err := os.MkdirTemp("", "bench-charts-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	opts := helmrepo.DefaultOptions()
	opts.CacheDir, opts.PlainHTTP = dir, plainHTTP
	s, err := helmrepo.New(opts)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	rev, err := s.Resolve(ctx, repo, "0.1.x")
	if err != nil {
		b.Fatal(err)
	}
	snap, err := s.Snapshot(ctx, repo, rev)
	if err != nil {
		b.Fatal(err)
	}
	objs, err := helm.New(helm.DefaultOptions()).Render(ctx, render.Input{FS: snap, Path: ".", Tool: render.KindHelm, AppName: "big", Namespace: "ns", KubeVersion: "1.37.2"})
	if err != nil || len(objs) != 50 {
		b.Fatal(len(objs), err)
	}
}

// helmPullTemplate runs `helm pull` then `helm template` of the archive,
// the reference binary v3.22.0, in a fresh Helm home.
func helmPullTemplate(b *testing.B, bin string, pull ...string) {
	home, err := os.MkdirTemp("", "bench-helm-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(home)
	env := append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	cmd := exec.Command(bin, append(append([]string{"pull"}, pull...), "--version", "0.1.x", "-d", home)...)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("helm pull: %v %s", err, out)
	}
	cmd = exec.Command(bin, "template", "big", filepath.Join(home, "big-0.1.0.tgz"), "--namespace", "ns", "--kube-version", "1.37.2")
	cmd.Env = env
	if out, err := cmd.Output(); err != nil || len(out) == 0 {
		b.Fatalf("helm template: %v", err)
	}
}

// BenchmarkColdChart50 times, in one run, a cold render of a 50-template
// chart from an HTTP chart repository and from an OCI registry (resolve a
// constraint, download, unpack, render) against `helm pull` + `helm
// template` of the same chart. ratio is ours / helm's (target <= 0.5).
func BenchmarkColdChart50(b *testing.B) {
	bin := reftools.ForTest(b, reftools.Helm)
	chartDir := bigChart(b)
	r := chartserver.New(b, chartserver.Options{})
	r.Add(chartDir)
	reg := chartserver.NewRegistry(b, "", "")
	reg.Push("charts", chartDir)
	for _, c := range []struct {
		name  string
		repo  source.Repository
		plain bool
		pull  []string
	}{
		{"http", source.Repository{URL: r.URL, Chart: "big"}, false, []string{"big", "--repo", r.URL}},
		{"oci", source.Repository{URL: "oci://" + reg.Host + "/charts", Chart: "big"}, true, []string{"oci://" + reg.Host + "/charts/big", "--plain-http"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var ours, theirs time.Duration
			for b.Loop() {
				t0 := time.Now()
				coldRender(b, c.repo, c.plain)
				t1 := time.Now()
				helmPullTemplate(b, bin, c.pull...)
				ours, theirs = ours+t1.Sub(t0), theirs+time.Since(t1)
			}
			n := float64(b.N)
			b.ReportMetric(float64(ours.Microseconds())/n/1000, "ours-ms/op")
			b.ReportMetric(float64(theirs.Microseconds())/n/1000, "helm-ms/op")
			b.ReportMetric(float64(ours)/float64(theirs), "ratio")
		})
	}
}

// BenchmarkWarmRefresh100ChartApps5Repos refreshes 100 chart apps (20 per
// repository, each with its own release name and values) on 5 HTTP chart
// repositories the way the engine does (Resolve, Snapshot, cached render),
// after one cold pass. Within one index interval every iteration must
// download no chart and request no index: downloads/op must be 0 and
// index-requests/repo stays 1 (the cold pass's).
func BenchmarkWarmRefresh100ChartApps5Repos(b *testing.B) {
	var repos []*chartserver.Repo
	for i := range 5 {
		r := chartserver.New(b, chartserver.Options{})
		r.Add(chartserver.WebChart(b, fmt.Sprintf("chart%d", i), "1.0.0"))
		r.Add(chartserver.WebChart(b, fmt.Sprintf("chart%d", i), "1.0.1"))
		repos = append(repos, r)
	}
	opts := helmrepo.DefaultOptions()
	opts.CacheDir = b.TempDir()
	opts.IndexTTL = time.Hour // one interval for the whole benchmark
	s, err := helmrepo.New(opts)
	if err != nil {
		b.Fatal(err)
	}
	renderer := render.Cached(render.Tools{render.KindHelm: helm.New(helm.DefaultOptions())}, store.NewMemory(store.DefaultMemoryOptions()), render.DefaultCacheOptions())
	ctx := context.Background()
	refresh := func() {
		for app := range 100 {
			r := repos[app%5]
			repo := source.Repository{URL: r.URL, Chart: fmt.Sprintf("chart%d", app%5)}
			rev, err := s.Resolve(ctx, repo, "1.0.x")
			if err != nil {
				b.Fatal(err)
			}
			snap, err := s.Snapshot(ctx, repo, rev)
			if err != nil {
				b.Fatal(err)
			}
			in := render.Input{FS: snap, Path: ".", Tool: render.KindHelm, AppName: fmt.Sprintf("app%03d", app), Namespace: "ns", KubeVersion: "1.37.2",
				Helm: &render.HelmSource{Values: fmt.Sprintf("greeting: app%03d\n", app)}}
			if objs, err := renderer.Render(ctx, in); err != nil || len(objs) != 2 {
				b.Fatal(len(objs), err)
			}
		}
	}
	refresh()
	cold := s.Stats()
	b.ResetTimer()
	for b.Loop() {
		refresh()
	}
	b.StopTimer()
	warm := s.Stats()
	var index, archives int64
	for _, r := range repos {
		index += r.Requests("/index.yaml")
		archives += r.ArchiveRequests()
	}
	b.ReportMetric(float64(warm.Downloads-cold.Downloads)/float64(b.N), "downloads/op")
	b.ReportMetric(float64(index)/5, "index-requests/repo")
	b.ReportMetric(float64(archives), "archive-requests-total")
	if warm.Downloads != cold.Downloads || index != 5 || archives != 5 {
		b.Fatalf("warm refreshes downloaded %d charts, %d index requests and %d archive requests in all; want 0 more downloads, 5 and 5",
			warm.Downloads-cold.Downloads, index, archives)
	}
}
