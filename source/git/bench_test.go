package git

import (
	"context"
	"fmt"
	"github.com/kubegitops/gitops/internal/benchdata"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/source"
)

// fastImportRepo creates a bare repository name under root with commits
// commits on main over a tree of files files (each commit rewrites one
// file), using git fast-import. It returns the tip commit.
func fastImportRepo(tb testing.TB, root, name string, commits, files int) string {
	tb.Helper()
	tip, err := benchdata.GitHistory(context.Background(), filepath.Join(root, name+".git"), commits, files)
	if err != nil {
		tb.Fatal(err)
	}
	return tip
}

func BenchmarkResolveCached(b *testing.B) {
	srv := newGitServer(b, "", "")
	fastImportRepo(b, srv.root, "r", 10, 10)
	s := newSource(b)
	repo := source.Repository{URL: srv.url("r")}
	ctx := context.Background()
	if _, err := s.Resolve(ctx, repo, "main"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Resolve(ctx, repo, "main"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkResolveUncached(b *testing.B) {
	srv := newGitServer(b, "", "")
	fastImportRepo(b, srv.root, "r", 10, 10)
	s := newSource(b, func(o *Options) { o.ResolveTTL = 0 })
	repo := source.Repository{URL: srv.url("r")}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Resolve(ctx, repo, "main"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSnapshotRead1000Files opens a fetched snapshot of 1,000 files in
// 100 directories and reads every file.
func BenchmarkSnapshotRead1000Files(b *testing.B) {
	srv := newGitServer(b, "", "")
	tip := fastImportRepo(b, srv.root, "r", 1, 1000)
	s := newSource(b)
	repo := source.Repository{URL: srv.url("r")}
	ctx := context.Background()
	if _, err := s.Snapshot(ctx, repo, source.Revision{Commit: tip}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		snap, err := s.OpenSnapshot(ctx, repo, source.Revision{Commit: tip})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		err = fs.WalkDir(snap, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			_, err = snap.ReadFile(p)
			n++
			return err
		})
		snap.Close()
		if err != nil || n != 1000 {
			b.Fatalf("read %d files: %v", n, err)
		}
	}
}

// fetchHelperEnv makes the test binary, re-executed, do one depth-1 fetch
// with this package and exit, so its peak RSS can be measured like the Git
// CLI's.
const fetchHelperEnv = "GITOPS_BENCH_FETCH_URL"

func TestMain(m *testing.M) {
	if u := os.Getenv(fetchHelperEnv); u != "" {
		os.Exit(fetchOnce(u, os.Getenv("GITOPS_BENCH_FETCH_COMMIT"), os.Getenv("GITOPS_BENCH_FETCH_DIR")))
	}
	os.Exit(m.Run())
}

func fetchOnce(url, commit, dir string) int {
	opts := DefaultOptions()
	opts.CacheDir = dir
	s, err := New(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	snap, err := s.OpenSnapshot(context.Background(), source.Repository{URL: url}, source.Revision{Commit: commit})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	snap.Close()
	return 0
}

// measure runs name with args under GNU time (/usr/bin/time, a small C
// program, so the peak it reports is the command's own: Go's os/exec
// starts children with vfork, and Linux carries the parent's peak RSS into
// a vforked child's maximum) and returns the wall time and the peak RSS of
// the command and its descendants.
func measure(b *testing.B, env []string, name string, args ...string) (time.Duration, int64) {
	b.Helper()
	out := filepath.Join(b.TempDir(), "maxrss")
	cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%M", "-o", out, name}, args...)...)
	cmd.Env = env
	start := time.Now()
	output, err := cmd.CombinedOutput()
	d := time.Since(start)
	if err != nil {
		b.Fatalf("%v: %v: %s", cmd.Args, err, output)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		b.Fatal(err)
	}
	fields := strings.Fields(string(raw))
	var kib int64
	if len(fields) == 0 {
		b.Fatalf("time wrote %q", raw)
	}
	if _, err := fmt.Sscan(fields[len(fields)-1], &kib); err != nil {
		b.Fatalf("time wrote %q: %v", raw, err)
	}
	return d, kib << 10
}

// BenchmarkFetchDepth1VsGitCLI fetches the tip of a 10,000-commit
// repository at depth 1 with this package (in a fresh process) and with
// `git fetch --depth 1`, from the same git http-backend, and reports both
// times and peak RSS and their ratios (target: within 2x).
func BenchmarkFetchDepth1VsGitCLI(b *testing.B) {
	srv := newGitServer(b, "", "")
	tip := fastImportRepo(b, srv.root, "big", 10_000, 1000)
	url := srv.url("big")
	var ourTime, gitTime time.Duration
	var ourRSS, gitRSS, ourDisk, gitDisk int64
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		cache := filepath.Join(b.TempDir(), "cache")
		d, rss := measure(b, append(os.Environ(), fetchHelperEnv+"="+url, "GITOPS_BENCH_FETCH_COMMIT="+tip,
			"GITOPS_BENCH_FETCH_DIR="+cache), os.Args[0], "-test.run=^$")
		ourDisk = dirSize(b, cache)
		ourTime += d
		ourRSS = max(ourRSS, rss)

		dir := filepath.Join(b.TempDir(), "cli")
		runGit(b, b.TempDir(), "init", "-q", "--bare", dir)
		d, rss = measure(b, append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir),
			"git", "-C", dir, "fetch", "-q", "--depth", "1", url, "main")
		gitTime += d
		gitRSS = max(gitRSS, rss)
		gitDisk = dirSize(b, dir)
	}
	n := float64(b.N)
	b.ReportMetric(float64(ourTime.Milliseconds())/n, "gogit-ms/op")
	b.ReportMetric(float64(gitTime.Milliseconds())/n, "gitcli-ms/op")
	b.ReportMetric(float64(ourTime)/float64(gitTime), "time-ratio")
	b.ReportMetric(float64(ourRSS)/(1<<20), "gogit-peak-MiB")
	b.ReportMetric(float64(gitRSS)/(1<<20), "gitcli-peak-MiB")
	b.ReportMetric(float64(ourRSS)/float64(gitRSS), "rss-ratio")
	b.ReportMetric(float64(ourDisk)/1024, "gogit-disk-KiB")
	b.ReportMetric(float64(gitDisk)/1024, "gitcli-disk-KiB")
}

// dirSize sums the sizes of the files under dir.
func dirSize(b *testing.B, dir string) int64 {
	b.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkFetchDepth1 is the same fetch in process, for allocations.
func BenchmarkFetchDepth1(b *testing.B) {
	srv := newGitServer(b, "", "")
	tip := fastImportRepo(b, srv.root, "big", 10_000, 1000)
	repo := source.Repository{URL: srv.url("big")}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s := newSource(b)
		snap, err := s.OpenSnapshot(context.Background(), repo, source.Revision{Commit: tip})
		if err != nil {
			b.Fatal(err)
		}
		snap.Close()
	}
}

// BenchmarkSnapshotOpenWith50Packs opens a snapshot of a store that 50
// separate depth-1 fetches filled with 50 packs: the cost must not grow
// with the number of packs (snapshots share one read handle).
func BenchmarkSnapshotOpenWith50Packs(b *testing.B) {
	srv := newGitServer(b, "", "")
	fastImportRepo(b, srv.root, "r", 50, 100)
	bare := filepath.Join(srv.root, "r.git")
	runGit(b, bare, "config", "uploadpack.allowReachableSHA1InWant", "true")
	commits := strings.Fields(runGit(b, bare, "rev-list", "main"))
	s := newSource(b)
	repo := source.Repository{URL: srv.url("r")}
	ctx := context.Background()
	for i := len(commits) - 1; i >= 0; i-- {
		if _, err := s.Snapshot(ctx, repo, source.Revision{Commit: commits[i]}); err != nil {
			b.Fatal(err)
		}
	}
	st, _ := s.store(mustEndpoint(b, repo))
	packs, _ := filepath.Glob(filepath.Join(st.current().dir, "objects", "pack", "*.pack"))
	if len(packs) != len(commits) {
		b.Fatalf("%d packs for %d fetches", len(packs), len(commits))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		snap, err := s.OpenSnapshot(ctx, repo, source.Revision{Commit: commits[i%len(commits)]})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := snap.TreeHash("apps"); err != nil {
			b.Fatal(err)
		}
	}
}
