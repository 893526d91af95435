package helmrepo_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/internal/helmindex"
	"github.com/kubegitops/gitops/source"
)

// A repository URL with a query (a signed or tokenised URL) is read as
// Helm reads it: index.yaml is resolved against the URL, keeping the
// query, instead of being appended after it.
func TestRepositoryURLQueryIsKept(t *testing.T) {
	r := newRepo(t)
	s := newSource(t, nil)
	ctx := context.Background()
	repo := repoOf(r)
	repo.URL = r.URL + "/?sig=abc"
	rev, err := s.Resolve(ctx, repo, "1.0.x")
	if err != nil {
		t.Fatalf("resolve through %s: %v", repo.URL, err)
	}
	if rev.Commit != "1.0.1" {
		t.Errorf("resolve 1.0.x = %s, want 1.0.1", rev.Commit)
	}
	if n := r.Requests("/index.yaml"); n != 1 {
		t.Errorf("index requests = %d, want 1", n)
	}
	snap, err := s.Snapshot(ctx, repo, rev)
	if err != nil {
		t.Fatal(err)
	}
	if data, err := fs.ReadFile(snap, "Chart.yaml"); err != nil || !strings.Contains(string(data), "version: 1.0.1") {
		t.Errorf("Chart.yaml: %q %v", data, err)
	}
}

// An index without apiVersion is refused as Helm refuses it, with an
// error naming the repository and not its credentials.
func TestIndexWithoutAPIVersionIsRefused(t *testing.T) {
	r := newRepo(t)
	path := filepath.Join(r.Dir, "index.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), "apiVersion: v1\n", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = newSource(t, nil).Resolve(context.Background(), repoOf(r), "*")
	var ie *helmindex.Error
	if !errors.Is(err, source.ErrInvalidRepository) || !errors.Is(err, helmindex.ErrNoAPIVersion) || !errors.As(err, &ie) {
		t.Fatalf("index without apiVersion: %v", err)
	}
	if !strings.Contains(err.Error(), strings.TrimPrefix(r.URL, "https://")) || strings.Contains(err.Error(), password) {
		t.Errorf("error %q must name the repository and not its password", err)
	}
}
