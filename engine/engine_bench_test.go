package engine

import (
	"context"
	"fmt"
	"runtime"
	gosync "sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/git"
	"github.com/kubegitops/gitops/sync"
)

// BenchmarkEngine500Apps reconciles 500 small apps that live in one Git
// repository (one folder and one ConfigMap each), served by a real Git
// server. It reports the first sync of all apps, refreshes per second with
// 10 workers, the heap after a full round, and the Git requests sent per
// resolve interval (the engine's resolve cache should make it one
// ls-remote per repository per interval, whatever the number of apps).
//
//	go test . -run '^$' -bench Engine500Apps -benchtime 3x
func BenchmarkEngine500Apps(b *testing.B) {
	const apps, workers = 500, 10
	const interval = 2 * time.Second
	ctx := context.Background()
	gs := testfiles.GitServer(b, gitserver.DefaultOptions())
	files := fstest.MapFS{}
	for i := 0; i < apps; i++ {
		files[fmt.Sprintf("apps/a%03d/cm.yaml", i)] = &fstest.MapFile{Data: []byte(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%03d}\ndata: {n: \"%d\"}\n", i, i))}
	}
	if _, err := gs.CreateRepository(ctx, "mono", files); err != nil {
		b.Fatal(err)
	}
	ns := cluster.TestNamespace(b)
	opts := DefaultOptions()
	opts.Clusters = []ClusterConfig{{Name: "in-cluster", Server: "https://kubernetes.default.svc", Config: cluster.Config()}}
	gitSource, err := git.New(git.Options{CacheDir: b.TempDir(), ResolveTTL: interval})
	if err != nil {
		b.Fatal(err)
	}
	opts.SourceFor = func(string) (source.Source, error) { return gitSource, nil }
	e, err := newWithBuiltins(opts)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	list := make([]*Application, apps)
	for i := range list {
		a := &Application{Spec: ApplicationSpec{
			Source:      &ApplicationSource{RepoURL: gs.RepoURL("mono"), Path: fmt.Sprintf("apps/a%03d", i), TargetRevision: gs.Branch()},
			Destination: ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns},
		}}
		a.Name = fmt.Sprintf("bench-%03d", i)
		list[i] = a
	}
	each := func(fn func(*Application) error) {
		var wg gosync.WaitGroup
		next := make(chan *Application)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for a := range next {
					if err := fn(a); err != nil {
						b.Error(err)
					}
				}
			}()
		}
		for _, a := range list {
			next <- a
		}
		close(next)
		wg.Wait()
	}
	start := time.Now()
	each(func(a *Application) error {
		res, err := e.Sync(ctx, a, SyncRequest{})
		if err == nil && res.Phase != sync.Succeeded {
			err = fmt.Errorf("%s: %s", a.Name, res.Phase)
		}
		return err
	})
	firstSync := time.Since(start)

	var rounds int
	b.ResetTimer()
	start = time.Now()
	requestsBefore := gs.Requests()
	for b.Loop() {
		each(func(a *Application) error {
			st, err := e.Refresh(ctx, a)
			if err == nil && st.Sync != appstatus.Synced {
				err = fmt.Errorf("%s: %s", a.Name, st.Sync)
			}
			return err
		})
		rounds++
	}
	elapsed := time.Since(start)
	requests := gs.Requests() - requestsBefore
	b.StopTimer()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	intervals := float64(elapsed) / float64(interval)
	if intervals < 1 {
		intervals = 1
	}
	b.ReportMetric(firstSync.Seconds(), "first-sync-s")
	b.ReportMetric(float64(apps*rounds)/elapsed.Seconds(), "refreshes/s")
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(requests)/intervals, "git-requests/interval")
}
