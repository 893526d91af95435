package git

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/source"
)

// TestHungFetchBlocksNoReader: while one fetch of a repository hangs in
// the server, snapshots of commits already stored, reads of open
// snapshots and resolves all proceed; another fetch of the same
// repository waits for the slot only as long as its own context allows.
func TestHungFetchBlocksNoReader(t *testing.T) {
	f := newFixture(t)
	hang := make(chan struct{})
	release := make(chan struct{})
	inner := f.srv.srv.Config.Handler
	f.srv.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/git-upload-pack") {
			select {
			case <-hang:
				<-release // the server stalls this fetch until released
			default:
			}
		}
		inner.ServeHTTP(w, r)
	})
	s := newSource(t)
	ctx := context.Background()
	stored, err := s.OpenSnapshot(ctx, f.repo, source.Revision{Commit: f.second})
	if err != nil {
		t.Fatal(err)
	}
	defer stored.Close()

	close(hang)
	hungDone := make(chan error, 1)
	go func() {
		_, err := s.Snapshot(ctx, f.repo, source.Revision{Commit: f.first})
		hungDone <- err
	}()
	waitUntil(t, "the hung fetch to hold the slot", func() bool {
		st, _ := s.store(mustEndpoint(t, f.repo))
		return len(st.sem) == 1
	})

	// Reads and resolves go on.
	if _, err := fs.ReadFile(stored, "apps/a/deploy.yaml"); err != nil {
		t.Fatalf("read during a hung fetch: %v", err)
	}
	again, err := s.Snapshot(ctx, f.repo, source.Revision{Commit: f.second})
	if err != nil {
		t.Fatalf("snapshot of a stored commit during a hung fetch: %v", err)
	}
	if _, err := again.TreeHash("apps"); err != nil {
		t.Fatal(err)
	}
	s.Invalidate(f.repo)
	if _, err := s.Resolve(ctx, f.repo, "main"); err != nil {
		t.Fatalf("resolve during a hung fetch: %v", err)
	}
	// Another fetch of the repository gives up with its own context.
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	other := strings.Repeat("e", 40)
	if _, err := s.Snapshot(short, f.repo, source.Revision{Commit: other}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second fetch while the slot is held: %v, want context.DeadlineExceeded", err)
	}
	select {
	case err := <-hungDone:
		t.Fatalf("the hung fetch returned before the server answered: %v", err)
	default:
	}
	close(release)
	if err := <-hungDone; err != nil {
		t.Fatalf("the released fetch failed: %v", err)
	}
}
