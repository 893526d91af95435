package git

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/source"
)

// TestSubmoduleIsAnEmptyDirectory: a gitlink pointing to another host's
// repository shows as an empty directory; nothing is fetched from that
// host, so no credential can go there.
func TestSubmoduleIsAnEmptyDirectory(t *testing.T) {
	srv := newGitServer(t, testUser, testSecret)
	w := newWorkRepo(t, srv.root, "super")
	w.write(map[string]string{"a.yaml": "kind: A\n", ".gitmodules": "[submodule \"vendor\"]\n\tpath = vendor\n\turl = https://github.com.evil.example/x/y.git\n"})
	w.git("update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("1", 40)+",vendor")
	w.git("add", "a.yaml", ".gitmodules")
	w.git("commit", "-q", "-m", "with submodule")
	commit := w.git("rev-parse", "HEAD")
	w.publish()
	s := newSource(t)
	repo := source.Repository{URL: srv.url("super"), Credentials: &source.Credentials{Username: testUser, Password: testSecret}}
	snap, err := s.OpenSnapshot(context.Background(), repo, source.Revision{Commit: commit})
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	info, err := fs.Stat(snap, "vendor")
	if err != nil || !info.IsDir() {
		t.Fatalf("Stat(vendor) = %v, %v; want a directory", info, err)
	}
	entries, err := fs.ReadDir(snap, "vendor")
	if err != nil || len(entries) != 0 {
		t.Fatalf("ReadDir(vendor) = %v, %v; want empty", entries, err)
	}
	if got, want := mustTreeHash(t, snap, "vendor"), strings.Repeat("1", 40); got != want {
		t.Fatalf("TreeHash(vendor) = %s, want the gitlink's commit %s", got, want)
	}
}
