package helmrepo_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubegitops/gitops/internal/chartserver"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/helmrepo"
)

const (
	user     = "chart-reader"
	password = "s3cr3t-chart-password"
)

// newRepo serves web 1.0.0, 1.0.1 and 1.1.0 over HTTPS with basic auth.
func newRepo(t *testing.T) *chartserver.Repo {
	t.Helper()
	r := chartserver.New(t, chartserver.Options{TLS: true, Username: user, Password: password})
	for _, v := range []string{"1.0.0", "1.0.1", "1.1.0"} {
		r.Add(chartserver.WebChart(t, "web", v))
	}
	return r
}

func newSource(t *testing.T, mod func(*helmrepo.Options)) *helmrepo.Source {
	t.Helper()
	opts := helmrepo.DefaultOptions()
	opts.CacheDir = t.TempDir()
	if mod != nil {
		mod(&opts)
	}
	s, err := helmrepo.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func repoOf(r *chartserver.Repo) source.Repository {
	return source.Repository{URL: r.URL, Chart: "web", Credentials: &source.Credentials{Username: user, Password: password, CAData: r.CAPEM}}
}

func TestResolveReadsVersionsAsHelmDoes(t *testing.T) {
	r := newRepo(t)
	s := newSource(t, nil)
	ctx := context.Background()
	for _, c := range []struct{ revision, want string }{
		{"1.0.0", "1.0.0"},
		{"1.0.x", "1.0.1"},
		{"~1.0", "1.0.1"},
		{"^1", "1.1.0"},
		{"*", "1.1.0"},
		{"", "1.1.0"},
		{">=1.0.0 <1.1.0", "1.0.1"},
		{">= 1.0.1", "1.1.0"},
	} {
		rev, err := s.Resolve(ctx, repoOf(r), c.revision)
		if err != nil {
			t.Fatalf("resolve %q: %v", c.revision, err)
		}
		if rev.Commit != c.want {
			t.Errorf("resolve %q = %s, want %s", c.revision, rev.Commit, c.want)
		}
	}
	// All of the above within the TTL: one index request.
	if n := r.Requests("/index.yaml"); n != 1 {
		t.Errorf("index requests = %d, want 1", n)
	}
	_, err := s.Resolve(ctx, repoOf(r), "2.x")
	if !errors.Is(err, source.ErrRevisionNotFound) {
		t.Errorf("resolve 2.x: %v, want ErrRevisionNotFound", err)
	}
	other := repoOf(r)
	other.Chart = "nope"
	if _, err := s.Resolve(ctx, other, "*"); !errors.Is(err, helmrepo.ErrChartNotFound) {
		t.Errorf("resolve of a missing chart: %v, want ErrChartNotFound", err)
	}
}

func TestSnapshotIsTheChartTreeAndIsFetchedOnce(t *testing.T) {
	r := newRepo(t)
	dir := t.TempDir()
	s := newSource(t, func(o *helmrepo.Options) { o.CacheDir = dir })
	ctx := context.Background()
	rev, err := s.Resolve(ctx, repoOf(r), "1.0.x")
	if err != nil {
		t.Fatal(err)
	}
	snap, err := s.Snapshot(ctx, repoOf(r), rev)
	if err != nil {
		t.Fatal(err)
	}
	data, err := fs.ReadFile(snap, "Chart.yaml")
	if err != nil || !strings.Contains(string(data), "version: 1.0.1") {
		t.Fatalf("Chart.yaml = %q, %v", data, err)
	}
	if _, err := fs.Stat(snap, "templates/deployment.yaml"); err != nil {
		t.Fatal(err)
	}
	h1, err := snap.TreeHash(".")
	if err != nil || h1 == "" {
		t.Fatalf("tree hash: %q, %v", h1, err)
	}
	if snap.Revision().Commit != "1.0.1" {
		t.Errorf("revision = %v", snap.Revision())
	}
	// Concurrent and repeated snapshots: still one download.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := s.Snapshot(ctx, repoOf(r), rev); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := r.Requests("/web-1.0.1.tgz"); n != 1 {
		t.Errorf("archive requests = %d, want 1", n)
	}
	// A new Source over the same cache directory never downloads it again.
	s2 := newSource(t, func(o *helmrepo.Options) { o.CacheDir = dir })
	snap2, err := s2.Snapshot(ctx, repoOf(r), rev)
	if err != nil {
		t.Fatal(err)
	}
	if h2, _ := snap2.TreeHash("."); h2 != h1 {
		t.Errorf("tree hash after restart %s, want %s", h2, h1)
	}
	if n := r.ArchiveRequests(); n != 1 || s2.Stats().Downloads != 0 {
		t.Errorf("archive requests = %d, downloads by second source = %d; want 1 and 0", n, s2.Stats().Downloads)
	}
	// Another version has another tree.
	other, err := s.Snapshot(ctx, repoOf(r), source.Revision{Commit: "1.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	if h3, _ := other.TreeHash("."); h3 == h1 {
		t.Error("1.1.0 has the tree hash of 1.0.1")
	}
}

func TestIndexRefreshIsSingleFlightedPerInterval(t *testing.T) {
	r := newRepo(t)
	s := newSource(t, func(o *helmrepo.Options) { o.IndexTTL = 200 * time.Millisecond })
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, err := s.Resolve(ctx, repoOf(r), "1.0.x"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := r.Requests("/index.yaml"); n != 1 {
		t.Fatalf("index requests = %d, want 1", n)
	}
	// A version published later is seen once the interval has passed.
	r.Add(chartserver.WebChart(t, "web", "1.0.2"))
	deadline := time.Now().Add(10 * time.Second)
	for {
		rev, err := s.Resolve(ctx, repoOf(r), "1.0.x")
		if err != nil {
			t.Fatal(err)
		}
		if rev.Commit == "1.0.2" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("1.0.2 not seen after the interval; still %s", rev.Commit)
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not synchronisation: the condition is the loop's
	}
	if n := r.Requests("/index.yaml"); n != 2 {
		t.Errorf("index requests = %d, want 2 (one per interval)", n)
	}
}

func TestCredentialsAndTrust(t *testing.T) {
	r := newRepo(t)
	s := newSource(t, nil)
	ctx := context.Background()
	bad := repoOf(r)
	bad.Credentials = &source.Credentials{Username: user, Password: "wrong-" + password, CAData: r.CAPEM}
	_, err := s.Resolve(ctx, bad, "*")
	if !errors.Is(err, source.ErrAuthentication) {
		t.Fatalf("wrong password: %v, want ErrAuthentication", err)
	}
	if strings.Contains(err.Error(), password) || strings.Contains(fmt.Sprintf("%+v", err), "wrong-") {
		t.Fatalf("error leaks the password: %v", err)
	}
	untrusted := repoOf(r)
	untrusted.Credentials = &source.Credentials{Username: user, Password: password}
	if _, err := s.Resolve(ctx, untrusted, "*"); !errors.Is(err, source.ErrUnavailable) || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("without the CA: %v, want an untrusted-certificate error", err)
	}
	// Credentials in the URL work and never show in errors.
	withUser := source.Repository{URL: strings.Replace(r.URL, "https://", "https://"+user+":"+password+"@", 1), Chart: "missing",
		Credentials: &source.Credentials{CAData: r.CAPEM}}
	_, err = s.Resolve(ctx, withUser, "*")
	if !errors.Is(err, helmrepo.ErrChartNotFound) || strings.Contains(err.Error(), password) {
		t.Fatalf("user info in URL: %v", err)
	}
}

func TestURLPolicyAppliesToChartRepositories(t *testing.T) {
	r := newRepo(t)
	s := newSource(t, func(o *helmrepo.Options) { o.Policy = &source.URLPolicy{DenyLoopback: true} })
	_, err := s.Resolve(context.Background(), repoOf(r), "*")
	if !errors.Is(err, source.ErrURLNotAllowed) {
		t.Fatalf("loopback repository under DenyLoopback: %v", err)
	}
	if r.Requests("/index.yaml") != 0 {
		t.Fatal("the refused repository was reached")
	}
}

func TestCacheStaysWithinItsBound(t *testing.T) {
	r := newRepo(t)
	s := newSource(t, func(o *helmrepo.Options) { o.MaxCacheBytes = 2048 })
	ctx := context.Background()
	for _, v := range []string{"1.0.0", "1.0.1", "1.1.0"} {
		if _, err := s.Snapshot(ctx, repoOf(r), source.Revision{Commit: v}); err != nil {
			t.Fatal(err)
		}
		if b := s.CacheBytes(); b > 2048 {
			// One blob larger than the bound may stay alone.
			t.Errorf("cache holds %d bytes past its bound of 2048", b)
		}
	}
}

func TestClientCertificate(t *testing.T) {
	certPEM, keyPEM, pool := chartserver.ClientCert(t)
	r := chartserver.New(t, chartserver.Options{TLS: true, ClientCAs: pool})
	r.Add(chartserver.WebChart(t, "web", "1.0.0"))
	s := newSource(t, nil)
	ctx := context.Background()
	with := source.Repository{URL: r.URL, Chart: "web", Credentials: &source.Credentials{CAData: r.CAPEM, TLSClientCertData: certPEM, TLSClientKeyData: keyPEM}}
	rev, err := s.Resolve(ctx, with, "1.x")
	if err != nil || rev.Commit != "1.0.0" {
		t.Fatalf("resolve with a client certificate: %v %v", rev, err)
	}
	if _, err := s.Snapshot(ctx, with, rev); err != nil {
		t.Fatal(err)
	}
	without := source.Repository{URL: r.URL, Chart: "web", Credentials: &source.Credentials{CAData: r.CAPEM}}
	if _, err := s.Resolve(ctx, without, "1.x"); !errors.Is(err, source.ErrUnavailable) {
		t.Fatalf("without a client certificate: %v", err)
	}
}

func TestInvalidateReadsTheIndexAgain(t *testing.T) {
	r := newRepo(t)
	reg := chartserver.NewRegistry(t, "", "")
	reg.Push("charts", chartserver.WebChart(t, "web", "1.0.0"))
	s := newSource(t, func(o *helmrepo.Options) { o.IndexTTL = time.Hour; o.PlainHTTP = true })
	ctx := context.Background()
	oci := source.Repository{URL: "oci://" + reg.Host + "/charts", Chart: "web"}
	for _, repo := range []source.Repository{repoOf(r), oci} {
		if _, err := s.Resolve(ctx, repo, "1.0.x"); err != nil {
			t.Fatal(err)
		}
	}
	r.Add(chartserver.WebChart(t, "web", "1.0.2"))
	reg.Push("charts", chartserver.WebChart(t, "web", "1.0.2"))
	for _, repo := range []source.Repository{repoOf(r), oci} {
		if rev, _ := s.Resolve(ctx, repo, "1.0.x"); rev.Commit == "1.0.2" {
			t.Fatalf("%s: the new version was seen within the TTL", repo.URL)
		}
		s.Invalidate(source.Repository{URL: repo.URL})
		if rev, err := s.Resolve(ctx, repo, "1.0.x"); err != nil || rev.Commit != "1.0.2" {
			t.Fatalf("%s: after Invalidate: %v %v", repo.URL, rev, err)
		}
	}
}

// A repository's own proxy carries every request; the URL policy still
// judges the target behind it.
func TestRepositoryProxy(t *testing.T) {
	r := chartserver.New(t, chartserver.Options{})
	r.Add(chartserver.WebChart(t, "web", "1.0.0"))
	proxy := chartserver.NewProxy(t)
	s := newSource(t, nil)
	ctx := context.Background()
	repo := source.Repository{URL: r.URL, Chart: "web", Credentials: &source.Credentials{Proxy: proxy.URL}}
	rev, err := s.Resolve(ctx, repo, "1.x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Snapshot(ctx, repo, rev); err != nil {
		t.Fatal(err)
	}
	if n := proxy.Forwards(); n != 2 {
		t.Errorf("the proxy forwarded %d requests, want 2 (index and archive)", n)
	}
	// NoProxy covering the host: straight to the repository.
	direct := source.Repository{URL: r.URL, Chart: "web", Credentials: &source.Credentials{Proxy: proxy.URL, NoProxy: "127.0.0.1"}}
	if _, err := s.Resolve(ctx, direct, "1.x"); err != nil || proxy.Forwards() != 2 {
		t.Errorf("NoProxy: %v, proxy forwards %d", err, proxy.Forwards())
	}
	// A policy that refuses the target refuses it behind a proxy too.
	strict := newSource(t, func(o *helmrepo.Options) { o.Policy = &source.URLPolicy{AllowedHosts: []string{"charts.example.com"}} })
	if _, err := strict.Resolve(ctx, repo, "1.x"); !errors.Is(err, source.ErrURLNotAllowed) || proxy.Forwards() != 2 {
		t.Errorf("policy behind a proxy: %v, proxy forwards %d", err, proxy.Forwards())
	}
	bad := source.Repository{URL: r.URL, Chart: "web", Credentials: &source.Credentials{Proxy: "socks5://u:SECRET@proxy"}}
	if _, err := newSource(t, nil).Resolve(ctx, bad, "1.x"); !errors.Is(err, source.ErrInvalidRepository) || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("malformed proxy: %v", err)
	}
}

// An HTTPS repository behind its proxy: a CONNECT tunnel, with the
// repository's CA and basic auth end to end.
func TestRepositoryProxyHTTPS(t *testing.T) {
	r := newRepo(t)
	proxy := chartserver.NewProxy(t)
	s := newSource(t, nil)
	repo := repoOf(r)
	repo.Credentials.Proxy = proxy.URL
	rev, err := s.Resolve(context.Background(), repo, "1.0.x")
	if err != nil || rev.Commit != "1.0.1" {
		t.Fatalf("resolve through a CONNECT proxy: %v %v", rev, err)
	}
	if proxy.Forwards() < 1 {
		t.Error("the proxy tunnelled nothing")
	}
}

func TestBearerToken(t *testing.T) {
	r := chartserver.New(t, chartserver.Options{TLS: true, BearerToken: "tok-SECRET-77"})
	r.Add(chartserver.WebChart(t, "web", "1.0.0"))
	s := newSource(t, nil)
	ctx := context.Background()
	repo := source.Repository{URL: r.URL, Chart: "web", Credentials: &source.Credentials{BearerToken: "tok-SECRET-77", CAData: r.CAPEM}}
	rev, err := s.Resolve(ctx, repo, "*")
	if err != nil || rev.Commit != "1.0.0" {
		t.Fatalf("resolve with a bearer token: %v %v", rev, err)
	}
	if _, err := s.Snapshot(ctx, repo, rev); err != nil {
		t.Fatal(err)
	}
	repo.Credentials = &source.Credentials{BearerToken: "tok-SECRET-wrong", CAData: r.CAPEM}
	if _, err := s.Resolve(ctx, repo, "*"); !errors.Is(err, source.ErrAuthentication) || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("wrong token: %v", err)
	}
}
