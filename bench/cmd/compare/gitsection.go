package main

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	tip, err := fastImport(ctx, filepath.Join(root, "server", "repos", "big.git"), h.cfg.GitCommits, h.cfg.GitFiles)
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

// fastImport creates the bare repository bare with commits commits on main
// over files files (the first commit adds them all, each later one
// rewrites one), and returns the tip.
func fastImport(ctx context.Context, bare string, commits, files int) (string, error) {
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_DIR="+bare)
	if out, err := gitCmd(ctx, env, "", "init", "-q", "--bare", "-b", "main", bare); err != nil {
		return "", fmt.Errorf("%v: %s", err, out)
	}
	cmd := exec.CommandContext(ctx, "git", "fast-import", "--quiet")
	cmd.Dir, cmd.Env = bare, env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return "", err
	}
	w := bufio.NewWriterSize(stdin, 1<<20)
	data := func(s string) { fmt.Fprintf(w, "data %d\n%s\n", len(s), s) }
	content := func(i, rev int) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\ndata:\n  rev: \"%d\"\n  pad: %q\n", i, rev, strings.Repeat("x", 200))
	}
	for c := 0; c < commits; c++ {
		fmt.Fprintf(w, "commit refs/heads/main\ncommitter bench <bench@example.invalid> %d +0000\n", 1700000000+c)
		data(fmt.Sprintf("commit %d", c))
		if c == 0 {
			for i := 0; i < files; i++ {
				fmt.Fprintf(w, "M 100644 inline apps/app-%03d/cm-%d.yaml\n", i/10, i)
				data(content(i, 0))
			}
			continue
		}
		i := c % files
		fmt.Fprintf(w, "M 100644 inline apps/app-%03d/cm-%d.yaml\n", i/10, i)
		data(content(i, c))
	}
	if err := w.Flush(); err != nil {
		return "", err
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		return "", fmt.Errorf("git fast-import: %v: %s", err, stderr.String())
	}
	out, err := gitCmd(ctx, env, bare, "rev-parse", "main")
	if err != nil {
		return "", fmt.Errorf("%v: %s", err, out)
	}
	return strings.TrimSpace(string(out)), nil
}
