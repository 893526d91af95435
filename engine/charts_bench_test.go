package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kubegitops/gitops/internal/chartserver"
	"github.com/kubegitops/gitops/source/helmrepo"
)

// BenchmarkEngineWarmRender100ChartApps5Repos renders 100 chart apps (20
// per HTTP chart repository, each with its own values) through the
// engine (offline destination: resolve, snapshot, cached render), after
// one cold pass, within one index interval. It fails unless the warm
// passes download no archive and request no index beyond the cold pass's
// one per repository.
func BenchmarkEngineWarmRender100ChartApps5Repos(b *testing.B) {
	var repos []*chartserver.Repo
	for i := range 5 {
		r := chartserver.New(b, chartserver.Options{})
		r.Add(chartserver.WebChart(b, fmt.Sprintf("chart%d", i), "1.0.0"))
		r.Add(chartserver.WebChart(b, fmt.Sprintf("chart%d", i), "1.0.1"))
		repos = append(repos, r)
	}
	hopts := helmrepo.DefaultOptions()
	hopts.CacheDir = b.TempDir()
	hopts.IndexTTL = time.Hour
	charts, err := helmrepo.New(hopts)
	if err != nil {
		b.Fatal(err)
	}
	opts := DefaultOptions()
	opts.Clusters = []ClusterConfig{{Name: "prod", Server: "https://prod.invalid", KubeVersion: "1.31.0"}}
	opts.ChartSource = charts
	e, err := newWithBuiltins(opts)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	apps := make([]*Application, 100)
	for i := range apps {
		apps[i] = &Application{Spec: ApplicationSpec{
			Source: &ApplicationSource{RepoURL: repos[i%5].URL, Chart: fmt.Sprintf("chart%d", i%5), TargetRevision: "1.0.x",
				Helm: &ApplicationSourceHelm{Values: fmt.Sprintf("greeting: app%03d\n", i)}},
			Destination: ApplicationDestination{Name: "prod", Namespace: "ns"},
		}}
		apps[i].Name = fmt.Sprintf("app%03d", i)
	}
	ctx := context.Background()
	renderAll := func() {
		for _, a := range apps {
			if objs, rev, err := e.Render(ctx, a); err != nil || len(objs) != 2 || rev != "1.0.1" {
				b.Fatal(len(objs), rev, err)
			}
		}
	}
	renderAll()
	b.ResetTimer()
	for b.Loop() {
		renderAll()
	}
	b.StopTimer()
	var index, archives int64
	for _, r := range repos {
		index += r.Requests("/index.yaml")
		archives += r.ArchiveRequests()
	}
	b.ReportMetric(float64(index)/5, "index-requests/repo")
	b.ReportMetric(float64(archives), "archive-requests-total")
	if index != 5 || archives != 5 {
		b.Fatalf("%d index and %d archive requests in all; want 5 and 5 (the cold pass's)", index, archives)
	}
}
