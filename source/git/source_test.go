package git

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kubegitops/gitops/source"
)

// fixture is a published repository with branches, tags and two commits.
type fixture struct {
	srv              *gitServer
	work             *workRepo
	repo             source.Repository
	first, second    string // commits on main
	feature          string // tip of refs/heads/feature
	annotatedTagObj  string // object id of the annotated tag v1.2.0
	lightweightFirst string // v1.0.0 -> first
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := newGitServer(t, "", "")
	w := newWorkRepo(t, srv.root, "app")
	w.write(map[string]string{
		"README.md":                  "hello\n",
		"apps/a/deploy.yaml":         "kind: Deployment\n",
		"apps/b/config.yaml":         "kind: ConfigMap\n",
		"apps/b/nested/service.yaml": "kind: Service\n",
	})
	first := w.commit("first")
	w.git("tag", "v1.0.0")
	w.git("tag", "-a", "v1.2.0", "-m", "annotated")
	w.write(map[string]string{"apps/a/deploy.yaml": "kind: Deployment\nreplicas: 2\n", "apps/c/new.yaml": "kind: Job\n"})
	second := w.commit("second")
	w.git("tag", "-a", "v1.4.3", "-m", "annotated")
	w.git("tag", "1.4.1")
	w.git("tag", "v2.0.0")
	w.git("tag", "v2.1.0-rc.1")
	w.git("branch", "feature", first)
	w.publish()
	return &fixture{
		srv: srv, work: w, repo: source.Repository{URL: srv.url("app")},
		first: first, second: second, feature: first,
		annotatedTagObj:  w.git("rev-parse", "v1.2.0"),
		lightweightFirst: first,
	}
}

func newSource(t testing.TB, mutate ...func(*Options)) *Source {
	t.Helper()
	opts := DefaultOptions()
	opts.CacheDir = t.TempDir()
	for _, m := range mutate {
		m(&opts)
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestResolveAgainstHTTPBackend(t *testing.T) {
	f := newFixture(t)
	s := newSource(t)
	ctx := context.Background()
	cases := []struct {
		rev        string
		wantCommit string
		wantRef    string
	}{
		{"", f.second, "refs/heads/main"},
		{"HEAD", f.second, "refs/heads/main"},
		{"main", f.second, "refs/heads/main"},
		{"feature", f.feature, "refs/heads/feature"},
		{"refs/heads/feature", f.feature, "refs/heads/feature"},
		{"v1.0.0", f.first, "refs/tags/v1.0.0"},
		{"v1.2.0", f.first, "refs/tags/v1.2.0"}, // annotated: peeled to the commit
		{"refs/tags/v1.4.3", f.second, "refs/tags/v1.4.3"},
		{">=1.2.0 <2", f.second, "refs/tags/v1.4.3"},
		{"~1.4", f.second, "refs/tags/v1.4.3"},
		{"^1", f.second, "refs/tags/v1.4.3"},
		{"<1.3", f.first, "refs/tags/v1.2.0"},
		{"*", f.second, "refs/tags/v2.0.0"}, // pre-release v2.1.0-rc.1 excluded
		{f.first, f.first, ""},
		{f.second[:10], f.second, ""},
	}
	for _, c := range cases {
		rev, err := s.Resolve(ctx, f.repo, c.rev)
		if err != nil {
			t.Errorf("Resolve(%q): %v", c.rev, err)
			continue
		}
		if rev.Commit != c.wantCommit || rev.Ref != c.wantRef {
			t.Errorf("Resolve(%q) = %s, want %s@%s", c.rev, rev, c.wantRef, c.wantCommit)
		}
	}
	if f.annotatedTagObj == f.first {
		t.Fatal("fixture: v1.2.0 should be an annotated tag object")
	}
	for _, bad := range []string{"nope", "refs/heads/nope", ">=9", "deadbeef"} {
		_, err := s.Resolve(ctx, f.repo, bad)
		if !errors.Is(err, source.ErrRevisionNotFound) {
			t.Errorf("Resolve(%q) error = %v, want ErrRevisionNotFound", bad, err)
		}
		var se *source.Error
		if !errors.As(err, &se) || se.Repository != f.repo.URL || se.Op != "resolve" {
			t.Errorf("Resolve(%q) error %v does not name the repository and op", bad, err)
		}
	}
	// One ls-remote served every resolve above (TTL 1 min).
	if n := f.srv.infoRefs.Load(); n != 1 {
		t.Errorf("ls-remote requests = %d, want 1", n)
	}
}

func TestResolveHundredConcurrentCostsOneLsRemote(t *testing.T) {
	f := newFixture(t)
	reg := prometheus.NewRegistry()
	s := newSource(t, func(o *Options) { o.Registerer = reg })
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rev := []string{"main", "v1.0.0", "~1.4", "feature"}[i%4]
			if _, err := s.Resolve(context.Background(), f.repo, rev); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := f.srv.infoRefs.Load(); n != 1 {
		t.Fatalf("100 concurrent resolves made %d ls-remote requests, want 1", n)
	}
	if n := testutil.ToFloat64(s.metrics.requests.WithLabelValues("ls-remote", "ok")); n != 1 {
		t.Fatalf("metric gitops_source_git_requests_total{op=ls-remote,result=ok} = %v, want 1", n)
	}
	if n := testutil.ToFloat64(s.metrics.resolves.WithLabelValues("hit")) + testutil.ToFloat64(s.metrics.resolves.WithLabelValues("miss")); n != 100 {
		t.Fatalf("resolve metrics count %v resolves, want 100", n)
	}
	// A second Source on the same registry shares the series.
	if _, err := New(Options{CacheDir: t.TempDir(), Registerer: reg}); err != nil {
		t.Fatal(err)
	}
}

func TestResolveCacheExpiresAfterTTL(t *testing.T) {
	f := newFixture(t)
	s := newSource(t, func(o *Options) { o.ResolveTTL = time.Minute })
	now := time.Unix(1000, 0)
	s.refs.now = func() time.Time { return now }
	ctx := context.Background()
	if _, err := s.Resolve(ctx, f.repo, "main"); err != nil {
		t.Fatal(err)
	}
	// A new commit lands; within the TTL the cached answer stands.
	f.work.write(map[string]string{"x": "1"})
	third := f.work.commit("third")
	f.work.publish()
	rev, _ := s.Resolve(ctx, f.repo, "main")
	if rev.Commit != f.second || f.srv.infoRefs.Load() != 1 {
		t.Fatalf("within TTL: got %s after %d ls-remotes, want cached %s after 1", rev.Commit, f.srv.infoRefs.Load(), f.second)
	}
	now = now.Add(time.Minute)
	rev, err := s.Resolve(ctx, f.repo, "main")
	if err != nil || rev.Commit != third || f.srv.infoRefs.Load() != 2 {
		t.Fatalf("after TTL: got %s, %v after %d ls-remotes, want %s after 2", rev.Commit, err, f.srv.infoRefs.Load(), third)
	}
	// A webhook names the repository in another form and without credentials.
	s.Invalidate(source.Repository{URL: strings.TrimSuffix(f.repo.URL, ".git") + "/"})
	if _, err := s.Resolve(ctx, f.repo, "main"); err != nil || f.srv.infoRefs.Load() != 3 {
		t.Fatalf("after Invalidate: %v, %d ls-remotes, want 3", err, f.srv.infoRefs.Load())
	}
}

func TestSnapshotReadsTreeWithGitTreeHashes(t *testing.T) {
	f := newFixture(t)
	s := newSource(t)
	ctx := context.Background()
	rev, err := s.Resolve(ctx, f.repo, "main")
	if err != nil {
		t.Fatal(err)
	}
	snap, err := s.Snapshot(ctx, f.repo, rev)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.(source.Closer).Close()
	if snap.Revision() != rev {
		t.Errorf("Revision() = %v, want %v", snap.Revision(), rev)
	}
	if err := fstest.TestFS(snap, "README.md", "apps/a/deploy.yaml", "apps/b/nested/service.yaml", "apps/c/new.yaml"); err != nil {
		t.Fatal(err)
	}
	data, err := fs.ReadFile(snap, "apps/a/deploy.yaml")
	if err != nil || string(data) != "kind: Deployment\nreplicas: 2\n" {
		t.Fatalf("ReadFile = %q, %v", data, err)
	}
	for _, p := range []string{".", "apps", "apps/b", "apps/b/nested", "apps/a/deploy.yaml"} {
		got, err := snap.TreeHash(p)
		if err != nil {
			t.Fatalf("TreeHash(%q): %v", p, err)
		}
		spec := rev.Commit + ":" + p
		if p == "." {
			spec = rev.Commit + "^{tree}"
		}
		if want := runGit(t, f.work.dir, "rev-parse", spec); got != want {
			t.Errorf("TreeHash(%q) = %s, git rev-parse says %s", p, got, want)
		}
	}
	if _, err := snap.TreeHash("apps/missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("TreeHash(missing) error = %v, want fs.ErrNotExist", err)
	}
	// A second Source on the same cache directory finds the commit
	// without fetching.
	before := f.srv.uploadPacks.Load()
	s2 := newSource(t, func(o *Options) { o.CacheDir = s.opts.CacheDir })
	if _, err := s2.Snapshot(ctx, f.repo, rev); err != nil {
		t.Fatal(err)
	}
	if after := f.srv.uploadPacks.Load(); after != before {
		t.Errorf("snapshot of a stored commit fetched again (%d upload-packs)", after-before)
	}
}

func TestSnapshotFetchesDepthOne(t *testing.T) {
	f := newFixture(t)
	s := newSource(t)
	ctx := context.Background()
	snap, err := s.OpenSnapshot(ctx, f.repo, source.Revision{Commit: f.second, Ref: "refs/heads/main"})
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	store, _ := s.store(mustEndpoint(t, f.repo))
	shallow, err := os.ReadFile(filepath.Join(store.current().dir, "shallow"))
	if err != nil || strings.TrimSpace(string(shallow)) != f.second {
		t.Fatalf("shallow file = %q, %v; want the fetched commit only", shallow, err)
	}
	if store.hasCommit(mustHash(f.first)) {
		t.Fatal("depth 1 fetch brought the parent commit too")
	}
	if n := strings.Fields(runGit(t, store.current().dir, "count-objects", "-v"))[0]; n == "" {
		t.Fatal("count-objects printed nothing")
	}
	// The CLI agrees the store is a valid repository holding the commit.
	if got := runGit(t, store.current().dir, "rev-parse", f.second+"^{tree}"); got != mustTreeHash(t, snap, ".") {
		t.Fatalf("git CLI reads tree %s from the store, snapshot says %s", got, mustTreeHash(t, snap, "."))
	}
}

func TestTwoRevisionsSnapshottedAtOnce(t *testing.T) {
	f := newFixture(t)
	s := newSource(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	results := make([]string, 2)
	errs := make([]error, 2)
	for i, commit := range []string{f.first, f.second} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			snap, err := s.Snapshot(ctx, f.repo, source.Revision{Commit: commit})
			if err != nil {
				errs[i] = err
				return
			}
			// Read concurrently from both while the other may still fetch.
			data, err := fs.ReadFile(snap, "apps/a/deploy.yaml")
			results[i], errs[i] = string(data), err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if results[0] != "kind: Deployment\n" || results[1] != "kind: Deployment\nreplicas: 2\n" {
		t.Fatalf("contents = %q", results)
	}
}

func TestConcurrentSnapshotsOfOneCommitShareOneFetch(t *testing.T) {
	f := newFixture(t)
	s := newSource(t)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			snap, err := s.Snapshot(context.Background(), f.repo, source.Revision{Commit: f.second})
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := fs.ReadFile(snap, "README.md"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := f.srv.uploadPacks.Load(); n != 1 {
		t.Fatalf("20 snapshots of one commit made %d upload-pack requests, want 1", n)
	}
}

func TestChangedPathsBetweenCommits(t *testing.T) {
	f := newFixture(t)
	s := newSource(t)
	ctx := context.Background()
	got, err := s.ChangedPaths(ctx, f.repo, source.Revision{Commit: f.first}, source.Revision{Commit: f.second}, ".")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"apps/a/deploy.yaml", "apps/c/new.yaml"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ChangedPaths = %v, want %v", got, want)
	}
	cli := strings.Fields(runGit(t, f.work.dir, "diff", "--name-only", f.first, f.second))
	sort.Strings(cli)
	if fmt.Sprint(cli) != fmt.Sprint(got) {
		t.Fatalf("ChangedPaths = %v, git diff --name-only says %v", got, cli)
	}
	got, err = s.ChangedPaths(ctx, f.repo, source.Revision{Commit: f.first}, source.Revision{Commit: f.second}, "apps/b")
	if err != nil || len(got) != 0 {
		t.Fatalf("ChangedPaths under unchanged apps/b = %v, %v", got, err)
	}
}

func TestFetchOfCommitThatIsNoTip(t *testing.T) {
	f := newFixture(t)
	f.work.write(map[string]string{"later": "x"})
	f.work.commit("later")
	f.work.publish()
	// f.second is no longer a tip of main, but still of v1.4.3; make a
	// commit only reachable through history.
	f.work.write(map[string]string{"mid": "x"})
	mid := f.work.commit("mid")
	f.work.write(map[string]string{"top": "x"})
	f.work.commit("top")
	f.work.publish()
	s := newSource(t)
	snap, err := s.Snapshot(context.Background(), f.repo, source.Revision{Commit: mid})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Stat(snap, "mid"); err != nil {
		t.Fatalf("snapshot of a non-tip commit lacks its file: %v", err)
	}
	if _, err := fs.Stat(snap, "top"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("snapshot of mid has a later file: %v", err)
	}
}

func TestSnapshotOfUnknownCommit(t *testing.T) {
	f := newFixture(t)
	s := newSource(t)
	_, err := s.Snapshot(context.Background(), f.repo, source.Revision{Commit: strings.Repeat("ab", 20)})
	if !errors.Is(err, source.ErrRevisionNotFound) {
		t.Fatalf("error = %v, want ErrRevisionNotFound", err)
	}
	_, err = s.Snapshot(context.Background(), f.repo, source.Revision{Commit: "main"})
	if !errors.Is(err, source.ErrRevisionNotFound) {
		t.Fatalf("snapshot of an unresolved name: error = %v, want ErrRevisionNotFound", err)
	}
}

func mustEndpoint(t testing.TB, repo source.Repository) endpoint {
	t.Helper()
	e, err := parseEndpoint(repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func mustTreeHash(t testing.TB, s source.Snapshot, p string) string {
	t.Helper()
	h, err := s.TreeHash(p)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestFetchOfNonTipWithServerAllowingSHAWants: when the server allows
// wanting any reachable commit, an old commit is fetched at depth 1 like a
// tip, without falling back to the full history.
func TestFetchOfNonTipWithServerAllowingSHAWants(t *testing.T) {
	f := newFixture(t)
	f.work.write(map[string]string{"later": "x"})
	f.work.commit("later")
	f.work.publish()
	runGit(t, f.work.bare, "config", "uploadpack.allowReachableSHA1InWant", "true")
	s := newSource(t)
	old := source.Revision{Commit: f.first}
	snap, err := s.OpenSnapshot(context.Background(), f.repo, old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Stat(snap, "apps/c/new.yaml"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("snapshot of the first commit has a later file: %v", err)
	}
	store, _ := s.store(mustEndpoint(t, f.repo))
	shallow, err := os.ReadFile(filepath.Join(store.current().dir, "shallow"))
	if err != nil || strings.TrimSpace(string(shallow)) != f.first {
		t.Fatalf("shallow = %q, %v; want only %s (a depth-1 fetch)", shallow, err, f.first)
	}
	if store.hasCommit(mustHash(f.second)) {
		t.Fatal("fetching an old commit brought later history")
	}
}

func mustHash(s string) plumbing.Hash { return plumbing.NewHash(s) }

// TestResolveTagPrefixAgainstServer is the monorepo of Argo CD's tagPrefix
// docs on a real Git server: each component tags its own releases, and
// "1.0.*" with tagPrefix "component-b/" follows component-b's patch
// releases only, picking up a new one once the refs are listed again.
func TestResolveTagPrefixAgainstServer(t *testing.T) {
	srv := newGitServer(t, "", "")
	w := newWorkRepo(t, srv.root, "mono")
	commits := map[string]string{}
	for _, tag := range []string{"component-a/1.0.0", "component-b/1.0.0", "component-b/1.0.3", "component-b/1.1.0"} {
		w.write(map[string]string{"release": tag + "\n"})
		commits[tag] = w.commit(tag)
		w.git("tag", "-a", tag, "-m", tag)
	}
	w.publish()
	s := newSource(t)
	ctx := context.Background()
	repo := source.Repository{URL: srv.url("mono"), TagPrefix: "component-b/"}
	rev, err := s.Resolve(ctx, repo, "1.0.*")
	if err != nil || rev.Commit != commits["component-b/1.0.3"] || rev.Ref != "refs/tags/component-b/1.0.3" {
		t.Fatalf("1.0.* under component-b/ = %v, %v; want refs/tags/component-b/1.0.3@%s", rev, err, commits["component-b/1.0.3"])
	}
	// Without the prefix no tag is a version: the constraint matches none.
	if _, err := s.Resolve(ctx, source.Repository{URL: repo.URL}, "1.0.*"); !errors.Is(err, source.ErrRevisionNotFound) {
		t.Fatalf("1.0.* without a prefix: %v, want not found", err)
	}
	// The next release is seen once the refs are listed again.
	w.write(map[string]string{"release": "component-b/1.0.4\n"})
	next := w.commit("component-b/1.0.4")
	w.git("tag", "component-b/1.0.4")
	w.publish()
	s.Invalidate(repo)
	if rev, err = s.Resolve(ctx, repo, "1.0.*"); err != nil || rev.Commit != next || rev.Ref != "refs/tags/component-b/1.0.4" {
		t.Fatalf("after component-b/1.0.4: %v, %v; want refs/tags/component-b/1.0.4@%s", rev, err, next)
	}
	_, err = s.Resolve(ctx, repo, "2.*")
	var se *source.Error
	if !errors.Is(err, source.ErrRevisionNotFound) || !errors.As(err, &se) || !strings.Contains(err.Error(), `"component-b/"`) || !strings.Contains(err.Error(), `"2.*"`) {
		t.Fatalf("2.* under component-b/: %v; want a not-found source.Error naming the prefix and the constraint", err)
	}
}
