package git

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/source"
)

// TestURLPolicyRefusesBeforeAndAtConnect covers user-asks S7: metadata and
// link-local addresses, schemes and hosts outside the allow list, and a
// host name that resolves to a refused address (caught at dial time, so
// DNS cannot smuggle it past the URL check).
func TestURLPolicyRefusesBeforeAndAtConnect(t *testing.T) {
	srv := newGitServer(t, "", "")
	w := newWorkRepo(t, srv.root, "r")
	w.commit("one")
	w.publish()
	port := srv.srv.URL[strings.LastIndex(srv.srv.URL, ":")+1:]
	ctx := context.Background()

	s := newSource(t, func(o *Options) { o.Policy = &source.URLPolicy{DenyLoopback: true} })
	for _, u := range []string{
		"http://169.254.169.254/latest/meta-data.git",
		"http://[fe80::1]/r.git",
		"http://localhost:" + port + "/r.git", // resolves to loopback: refused when dialling
		"http://127.0.0.1:" + port + "/r.git",
	} {
		_, err := s.Resolve(ctx, source.Repository{URL: u}, "main")
		if !errors.Is(err, source.ErrURLNotAllowed) {
			t.Errorf("%s: error = %v, want ErrURLNotAllowed", u, err)
		}
	}
	if srv.infoRefs.Load() != 0 {
		t.Fatalf("a refused URL reached the server %d times", srv.infoRefs.Load())
	}

	allow := newSource(t, func(o *Options) {
		o.Policy = &source.URLPolicy{AllowedSchemes: []string{"http"}, AllowedHosts: []string{"127.0.0.1"}}
	})
	if _, err := allow.Resolve(ctx, source.Repository{URL: srv.url("r")}, "main"); err != nil {
		t.Fatalf("allowed host refused: %v", err)
	}
	for _, u := range []string{"ssh://git@127.0.0.1/r.git", "http://localhost:" + port + "/r.git"} {
		if _, err := allow.Resolve(ctx, source.Repository{URL: u}, "main"); !errors.Is(err, source.ErrURLNotAllowed) {
			t.Errorf("%s: error = %v, want ErrURLNotAllowed", u, err)
		}
	}
	if _, err := allow.Resolve(ctx, source.Repository{URL: "file:///etc"}, "main"); !errors.Is(err, source.ErrInvalidRepository) && !errors.Is(err, source.ErrURLNotAllowed) {
		t.Errorf("file URL: error = %v", err)
	}
}
