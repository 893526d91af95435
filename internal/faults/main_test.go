package faults

import (
	"context"
	"encoding/json"
	"github.com/kubegitops/gitops/internal/testfiles"
	"net"
	"net/http"
	"os"
	"strings"
	gosync "sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/internal/testfiles/testengine"
	"github.com/kubegitops/gitops/sync"
	"github.com/kubegitops/gitops/testenv"
)

// cluster is this package's own cluster, with controllers and a kwok node
// (Deployments become Available and Jobs complete): the tests kill its API
// server, so no other package may share it.
var cluster *testenv.Cluster

func TestMain(m *testing.M) {
	os.Exit(testenv.RunMain(m, testenv.DefaultOptions(), &cluster))
}

const inCluster = "https://kubernetes.default.svc"

// newEngine returns an engine on the cluster, with cfg (nil: the admin
// config) as its identity and waits short enough for a test.
func newEngine(t *testing.T, cfg *rest.Config, tweak func(*gitops.Options)) *gitops.Engine {
	t.Helper()
	if cfg == nil {
		cfg = cluster.Config()
	}
	return testengine.New(t, cfg, func(opts *gitops.Options) {
		opts.Sync.WaveTimeout = 2 * time.Minute
		opts.Sync.PollInterval = 100 * time.Millisecond
		opts.Cache.RetryMax = 2 * time.Second
		if tweak != nil {
			tweak(opts)
		}
	})
}

// repoDir writes files into a folder that serves as an app's source.
func repoDir(t *testing.T, files map[string]string) string { return testfiles.Tree(t, files) }

// newApp is an app of repoURL's folder "app", deployed to ns.
func newApp(name, repoURL, ns string) *gitops.Application {
	a := &gitops.Application{Spec: gitops.ApplicationSpec{
		Source:      &gitops.ApplicationSource{RepoURL: repoURL, Path: "app"},
		Destination: gitops.ApplicationDestination{Server: inCluster, Namespace: ns},
	}}
	a.Name = name
	return a
}

// waitFor polls cond every 50 ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if err := waitUntil(timeout, cond); err != nil {
		t.Fatalf("waited %s for %s: %v", timeout, what, err)
	}
}

// waitUntil polls cond every 50 ms until it holds or timeout passes.
func waitUntil(timeout time.Duration, cond func() bool) error {
	return wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
}

func dynamicClient(t *testing.T) dynamic.Interface {
	t.Helper()
	cfg := cluster.Config()
	cfg.QPS, cfg.Burst = 200, 400
	d, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// writes counts the writes (not dry-runs) a client sends, per method and
// resource, and can run a hook on a write's response.
type writes struct {
	next http.RoundTripper

	mu     gosync.Mutex
	counts map[string]int // "PATCH configmaps/name"
	// after, when set, is called after each write's response with its
	// method, resource path and status code; it runs on the request's
	// goroutine, so it may block that request.
	after func(method, path string, code int)
	// lose, when set and true for a write, drops the write's response
	// after the server answered it and returns a connection reset
	// instead: a reply lost on the way back (the server did the write).
	lose func(method, path string, code int) bool
}

// wrap installs w into cfg.
func (w *writes) wrap(cfg *rest.Config) *rest.Config {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { w.next = rt; return w })
	return cfg
}

// RoundTrip implements http.RoundTripper.
func (w *writes) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := w.next.RoundTrip(r)
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return resp, err
	}
	if strings.Contains(r.URL.RawQuery, "dryRun=All") {
		return resp, err
	}
	key := r.Method + " " + resourcePath(r.URL.Path)
	w.mu.Lock()
	if w.counts == nil {
		w.counts = map[string]int{}
	}
	w.counts[key]++
	after, lose := w.after, w.lose
	w.mu.Unlock()
	code := 0
	if resp != nil {
		code = resp.StatusCode
	}
	if after != nil {
		after(r.Method, resourcePath(r.URL.Path), code)
	}
	if lose != nil && err == nil && lose(r.Method, resourcePath(r.URL.Path), code) {
		resp.Body.Close()
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	}
	return resp, err
}

// count returns how many writes of method went to the resource path
// ("configmaps/name", or "jobs" for creations).
func (w *writes) count(method, path string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.counts[method+" "+path]
}

// total returns the writes whose key starts with prefix ("PATCH configmaps/").
func (w *writes) total(prefix string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for k, v := range w.counts {
		if strings.HasPrefix(k, prefix) {
			n += v
		}
	}
	return n
}

// resourcePath is "<resource>/<name>" (or "<resource>" for a creation) of
// a namespaced API path.
func resourcePath(p string) string {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	for i, s := range parts {
		if s == "namespaces" && i+2 < len(parts) {
			return strings.Join(parts[i+2:], "/")
		}
	}
	return strings.Join(parts, "/")
}

// logBuffer captures everything a logr.Logger writes, at every verbosity.
type logBuffer struct {
	mu    gosync.Mutex
	lines []string
}

func (b *logBuffer) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		b.mu.Lock()
		b.lines = append(b.lines, prefix+" "+args)
		b.mu.Unlock()
	}, funcr.Options{Verbosity: 10})
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

// roundTrip serialises a sync state as a host would store it, and reads it
// back.
func roundTrip(t *testing.T, st sync.State) sync.State {
	t.Helper()
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var out sync.State
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
