package testfiles

import (
	"context"
	"io/fs"
	"testing"
	"time"

	"github.com/kubegitops/gitops/internal/gitserver"
)

// GitServer starts a Git server (internal/gitserver) with opts for the
// test and closes it when the test ends; the test fails if it cannot
// start. A test may Close it earlier, to see fetches fail.
func GitServer(t testing.TB, opts gitserver.Options) *gitserver.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	gs, err := gitserver.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gs.Close() })
	return gs
}

// GitRepo starts a Git server with opts for the test (see GitServer) that
// serves one repository, name, with files as its first commit on the
// server's branch. It returns the server (RepoURL(name) is the clone URL)
// and that commit.
func GitRepo(t testing.TB, opts gitserver.Options, name string, files fs.FS) (*gitserver.Server, string) {
	t.Helper()
	gs := GitServer(t, opts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	commit, err := gs.CreateRepository(ctx, name, files)
	if err != nil {
		t.Fatal(err)
	}
	return gs, commit
}
