package notify

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	gosync "sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// testApp is an Application map of Argo CD's shape.
func testApp(name string, annotations map[string]any, status map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": name, "namespace": "argocd", "annotations": annotations},
		"spec": map[string]any{"project": "default",
			"source":      map[string]any{"repoURL": "git@github.com:acme/web.git", "path": "app"},
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": "web"}},
		"status": status,
	}
}

// succeeded is a status after a successful sync of rev.
func succeeded(rev, health string) map[string]any {
	return map[string]any{
		"sync":   map[string]any{"status": "Synced", "revision": rev},
		"health": map[string]any{"status": health, "lastTransitionTime": "2026-12-01T10:00:07Z"},
		"operationState": map[string]any{"phase": "Succeeded", "message": "successfully synced",
			"startedAt": "2026-12-01T10:00:00Z", "finishedAt": "2026-12-01T10:00:05Z",
			"syncResult": map[string]any{"revision": rev}},
	}
}

// request is what a receiver got.
type request struct {
	Method, Path, Body string
	Header             http.Header
}

// receiver is a real HTTP server on loopback that records requests and
// answers with the status codes it is told (then 200).
type receiver struct {
	*httptest.Server
	mu    gosync.Mutex
	got   []request
	codes []int
	reply string
}

func newReceiver(t *testing.T, codes ...int) *receiver {
	r := &receiver{codes: codes}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, request{Method: req.Method, Path: req.URL.Path, Body: string(b), Header: req.Header.Clone()})
		code := http.StatusOK
		if len(r.codes) > 0 {
			code, r.codes = r.codes[0], r.codes[1:]
		}
		reply := r.reply
		r.mu.Unlock()
		w.WriteHeader(code)
		_, _ = io.WriteString(w, reply)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) requests() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]request(nil), r.got...)
}

// waitFor polls cond until it holds or 20 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// runController starts c until the test ends.
func runController(t *testing.T, c *Controller) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// mustLoad loads data (with the catalog under it) and secret.
func mustLoad(t testing.TB, data, secret map[string]string) *Config {
	t.Helper()
	c, err := Load(WithCatalog(data), secret, DefaultLoadOptions())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func decodeBase64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }
