package git

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kubegitops/gitops/internal/lfsserver"
	"github.com/kubegitops/gitops/source"
)

// countingFront is a reverse proxy in front of the LFS server that counts
// batch requests (the object downloads go straight to the server's
// storage, as its batch answers name it).
func countingFront(t *testing.T, target string) (string, *atomic.Int64) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	var batches atomic.Int64
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/objects/batch") {
			batches.Add(1)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &batches
}

func readSnap(t *testing.T, s *Source, repo source.Repository) *Snapshot {
	t.Helper()
	rev, err := s.Resolve(context.Background(), repo, "main")
	if err != nil {
		t.Fatal(err)
	}
	snap, err := s.OpenSnapshot(context.Background(), repo, rev)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = snap.Close() })
	return snap
}

// enableLfs against git-lfs's own test server (the real batch API and
// storage, objects uploaded as `git lfs push` does): a snapshot reads the
// objects the pointer files name, fetched once with the repository's
// credentials and cached by oid, so neither the next snapshot nor a new
// Source on the same cache asks the server again; without EnableLFS the
// pointers are read as committed.
func TestLFSObjectsAreFetchedAtSnapshot(t *testing.T) {
	srv := lfsserver.Start(t)
	manifest := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata: {k: " + strings.Repeat("v", 4000) + "}\n")
	blob := make([]byte, 300<<10)
	_, _ = rand.Read(blob)
	srv.CreateRepository(t, "lfs-app", map[string][]byte{"app/plain.yaml": []byte("kind: A\n")},
		map[string][]byte{"app/big.yaml": manifest, "bin/blob.bin": blob})
	front, batches := countingFront(t, srv.URL)
	// The batch endpoint wants user and pass; the storage the batch names
	// is on the server's own port, another origin, where no credentials
	// go.
	repo := source.Repository{URL: front + "/lfs-app.git",
		Credentials: &source.Credentials{Username: "user", Password: "pass", EnableLFS: true}}
	cache := t.TempDir()
	s := newSource(t, func(o *Options) { o.CacheDir = cache })
	snap := readSnap(t, s, repo)
	for name, want := range map[string][]byte{"app/big.yaml": manifest, "bin/blob.bin": blob, "app/plain.yaml": []byte("kind: A\n")} {
		got, err := fs.ReadFile(snap, name)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: %d bytes, %v; want the object's %d bytes", name, len(got), err, len(want))
		}
		st, err := fs.Stat(snap, name)
		if err != nil || st.Size() != int64(len(want)) {
			t.Fatalf("%s: stat %v %v", name, st, err)
		}
	}
	if h, _ := snap.TreeHash("app"); !strings.HasPrefix(h, "lfs:") {
		t.Errorf("tree hash of an LFS snapshot %q, want the lfs: prefix", h)
	}
	if n := batches.Load(); n != 1 {
		t.Errorf("%d batch requests for the first snapshot, want 1", n)
	}
	readSnap(t, s, repo)
	again := newSource(t, func(o *Options) { o.CacheDir = cache })
	readSnap(t, again, repo)
	if n := batches.Load(); n != 1 {
		t.Errorf("%d batch requests after two more snapshots, want the objects cached by oid (1)", n)
	}
	plain := repo
	plain.Credentials = &source.Credentials{Username: "user", Password: "pass"}
	got, err := fs.ReadFile(readSnap(t, newSource(t), plain), "app/big.yaml")
	if err != nil || !bytes.Equal(got, lfsserver.Pointer(manifest)) {
		t.Errorf("without EnableLFS: %q %v, want the pointer", got, err)
	}
}

// The LFS server's refusals and the limits fail the snapshot with an
// *LFSError (naming the file and the object when one is at fault), never
// the password.
func TestLFSErrorsNameTheFile(t *testing.T) {
	srv := lfsserver.Start(t)
	srv.CreateRepository(t, "requirecreds-errs", nil, map[string][]byte{"app/big.yaml": []byte("kind: Big\n" + strings.Repeat("#", 5000))})
	url := srv.RepoURL("requirecreds-errs")
	open := func(creds *source.Credentials, mutate ...func(*Options)) error {
		s := newSource(t, mutate...)
		repo := source.Repository{URL: url, Credentials: creds}
		rev, err := s.Resolve(context.Background(), repo, "main")
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.OpenSnapshot(context.Background(), repo, rev)
		return err
	}
	var le *LFSError
	err := open(&source.Credentials{Username: "requirecreds", Password: "wrong-SECRET", EnableLFS: true})
	if !errors.As(err, &le) || !errors.Is(err, source.ErrAuthentication) || strings.Contains(err.Error(), "wrong-SECRET") {
		t.Errorf("the LFS server refusing the password: %v", err)
	}
	err = open(&source.Credentials{Username: "requirecreds", Password: "pass", EnableLFS: true}, func(o *Options) { o.LFS.MaxObjectBytes = 1000 })
	if !errors.As(err, &le) || le.Path != "app/big.yaml" || !errors.Is(err, ErrLFSLimit) {
		t.Errorf("an object past MaxObjectBytes: %v", err)
	}
	err = open(&source.Credentials{EnableLFS: true})
	if !errors.Is(err, source.ErrAuthentication) {
		t.Errorf("no credentials: %v", err)
	}
}

// .lfsconfig's lfs.url names the LFS server (here another repository's
// endpoint on the same server), as git-lfs reads it.
func TestLFSConfigURL(t *testing.T) {
	srv := lfsserver.Start(t)
	content := []byte("kind: Shared\n")
	srv.Upload(t, "requirecreds-store", content)
	srv.CreateRepository(t, "requirecreds-cfg", map[string][]byte{
		".lfsconfig":    []byte("[lfs]\n\turl = " + srv.RepoURL("requirecreds-store") + "/info/lfs\n"),
		"app/data.yaml": lfsserver.Pointer(content),
	}, nil)
	s := newSource(t)
	snap := readSnap(t, s, source.Repository{URL: srv.RepoURL("requirecreds-cfg"), Credentials: &source.Credentials{Username: "requirecreds", Password: "pass", EnableLFS: true}})
	if got, err := fs.ReadFile(snap, "app/data.yaml"); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("with lfs.url: %q %v", got, err)
	}
}

func TestParsePointer(t *testing.T) {
	oid := strings.Repeat("ab", 32)
	for in, ok := range map[string]bool{
		"version https://git-lfs.github.com/spec/v1\noid sha256:" + oid + "\nsize 12\n":                    true,
		"version https://git-lfs.github.com/spec/v1\next-0-foo sha256:x\noid sha256:" + oid + "\nsize 1\n": true,
		"version https://hawser.github.com/spec/v1\noid sha256:" + oid + "\nsize 0\n":                      true,
		"version https://git-lfs.github.com/spec/v1\noid sha256:" + oid + "\nsize 12":                      false,
		"version https://git-lfs.github.com/spec/v1\noid sha1:" + oid[:40] + "\nsize 12\n":                 false,
		"version https://git-lfs.github.com/spec/v1\noid sha256:" + oid + "\nsize -1\n":                    false,
		"version https://git-lfs.github.com/spec/v1\nsize 12\n":                                            false,
		"kind: ConfigMap\n": false,
	} {
		if _, got := parsePointer([]byte(in)); got != ok {
			t.Errorf("%q: %v, want %v", in, got, ok)
		}
	}
}
