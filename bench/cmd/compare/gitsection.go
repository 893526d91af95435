package main

import (
	"context"
	"fmt"
	"github.com/kubegitops/gitops/internal/benchdata"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/git"
)

// gitSection serves a repository of cfg.GitCommits commits over
// cfg.GitFiles files from `git http-backend` and fetches its tip at depth 1
// with source/git (a fresh cache each time), with `git clone --depth 1`
// and with `git fetch --depth 1` into an empty bare repository.
func (h *harness) gitSection(ctx context.Context) ([]Row, error) {
	root, err := os.MkdirTemp("", "bench-git-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	srv, err := gitserver.Start(ctx, gitserver.Options{Dir: filepath.Join(root, "server")})
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	// The server serves the bare repositories under <Dir>/repos; the big
	// history is written there with git fast-import, far faster than
	// thousands of commits through gitserver.Commit.
	h.logf("writing a repository of %d commits over %d files", h.cfg.GitCommits, h.cfg.GitFiles)
	tip, err := benchdata.GitHistory(ctx, filepath.Join(root, "server", "repos", "big.git"), h.cfg.GitCommits, h.cfg.GitFiles)
	if err != nil {
		return nil, err
	}
	url := srv.RepoURL("big")
	repo := source.Repository{URL: url}

	ourFetch := func(i int) (time.Duration, error) {
		opts := git.DefaultOptions()
		opts.CacheDir = filepath.Join(root, fmt.Sprintf("ours-%d", i))
		s, err := git.New(opts)
		if err != nil {
			return 0, err
		}
		defer s.Close()
		start := time.Now()
		snap, err := s.OpenSnapshot(ctx, repo, source.Revision{Commit: tip})
		if err != nil {
			return 0, err
		}
		d := time.Since(start)
		defer snap.Close()
		if _, err := fs.Stat(snap, "apps"); err != nil {
			return 0, fmt.Errorf("snapshot lacks apps/: %w", err)
		}
		return d, nil
	}
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	cliClone := func(i int) (time.Duration, error) {
		dest := filepath.Join(root, fmt.Sprintf("clone-%d", i))
		start := time.Now()
		if out, err := gitCmd(ctx, env, "", "clone", "-q", "--depth", "1", "--no-checkout", url, dest); err != nil {
			return 0, fmt.Errorf("%v: %s", err, out)
		}
		return time.Since(start), nil
	}
	cliFetch := func(i int) (time.Duration, error) {
		dest := filepath.Join(root, fmt.Sprintf("fetch-%d", i))
		if out, err := gitCmd(ctx, env, "", "init", "-q", "--bare", dest); err != nil {
			return 0, fmt.Errorf("%v: %s", err, out)
		}
		start := time.Now()
		if out, err := gitCmd(ctx, env, dest, "fetch", "-q", "--depth", "1", url, srv.Branch()); err != nil {
			return 0, fmt.Errorf("%v: %s", err, out)
		}
		return time.Since(start), nil
	}
	var ours, clone, fetch []time.Duration
	for i := range h.cfg.Repeat {
		for _, m := range []struct {
			fn  func(int) (time.Duration, error)
			out *[]time.Duration
		}{{ourFetch, &ours}, {cliClone, &clone}, {cliFetch, &fetch}} {
			d, err := m.fn(i)
			if err != nil {
				return nil, err
			}
			*m.out = append(*m.out, d)
		}
	}
	h.logf("git: ours %.1f ms, clone %.1f ms, fetch %.1f ms", medianDuration(ours)*1e3, medianDuration(clone)*1e3, medianDuration(fetch)*1e3)
	measure := fmt.Sprintf("depth-1 fetch, %d commits, %d files", h.cfg.GitCommits, h.cfg.GitFiles)
	o := medianDuration(ours) * 1e3
	return []Row{
		{Section: "git", Measure: measure, Ours: o, Theirs: medianDuration(fetch) * 1e3, TheirName: "git fetch --depth 1", Unit: Millis, Target: "within 2x (issue 3)"},
		{Section: "git", Measure: measure, Ours: o, Theirs: medianDuration(clone) * 1e3, TheirName: "git clone --depth 1 --no-checkout", Unit: Millis, Target: "within 2x (issue 3)"},
	}, nil
}

// gitCmd runs git with env in dir and returns its combined output.
func gitCmd(ctx context.Context, env []string, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = env
	return cmd.CombinedOutput()
}
