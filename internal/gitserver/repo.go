package gitserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// CreateRepository creates a bare repository called name with the files of
// files as its first commit on the server's branch, and returns that
// commit. The name must be one path element of letters, digits, '.', '_'
// or '-'.
func (s *Server) CreateRepository(ctx context.Context, name string, files fs.FS) (string, error) {
	if !repoName.MatchString(name) || strings.HasSuffix(name, ".git") {
		return "", fmt.Errorf("gitserver: bad repository name %q", name)
	}
	bare := filepath.Join(s.dir, "repos", name+".git")
	work := filepath.Join(s.dir, "work", name)
	if _, err := os.Stat(bare); err == nil {
		return "", fmt.Errorf("gitserver: repository %q exists", name)
	}
	if _, err := s.output(ctx, "", "init", "--quiet", "--bare", "--initial-branch="+s.opts.Branch, bare); err != nil {
		return "", err
	}
	if _, err := s.output(ctx, "", "init", "--quiet", "--initial-branch="+s.opts.Branch, work); err != nil {
		return "", err
	}
	if _, err := s.output(ctx, work, "remote", "add", "origin", bare); err != nil {
		return "", err
	}
	if err := copyFS(work, files); err != nil {
		return "", fmt.Errorf("gitserver: %s: %w", name, err)
	}
	return s.commitAndPush(ctx, name, "initial commit")
}

// Commit writes changes into the repository's working clone (a nil value
// deletes the file; paths are slash-separated and relative), commits them
// with message and pushes the commit to the served repository. It returns
// the new commit. Commits to one repository must not run concurrently.
func (s *Server) Commit(ctx context.Context, name, message string, changes map[string][]byte) (string, error) {
	if !repoName.MatchString(name) {
		return "", fmt.Errorf("gitserver: bad repository name %q", name)
	}
	work := filepath.Join(s.dir, "work", name)
	if _, err := os.Stat(work); err != nil {
		return "", fmt.Errorf("gitserver: no repository %q", name)
	}
	// Clients may have pushed (Options.PushPassword, Options.SSH): commit on the
	// served branch's head.
	if _, err := s.output(ctx, work, "fetch", "--quiet", "origin"); err != nil {
		return "", err
	}
	if _, err := s.output(ctx, work, "reset", "--quiet", "--hard", "origin/"+s.opts.Branch); err != nil {
		return "", err
	}
	paths := make([]string, 0, len(changes))
	for p := range changes {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		clean := path.Clean(p)
		if !fs.ValidPath(clean) || clean == "." || clean == ".git" || strings.HasPrefix(clean, ".git/") {
			return "", fmt.Errorf("gitserver: bad path %q", p)
		}
		full := filepath.Join(work, filepath.FromSlash(clean))
		if changes[p] == nil {
			if err := os.Remove(full); err != nil {
				return "", fmt.Errorf("gitserver: delete %s: %w", p, err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return "", fmt.Errorf("gitserver: %w", err)
		}
		if err := os.WriteFile(full, changes[p], 0o644); err != nil {
			return "", fmt.Errorf("gitserver: write %s: %w", p, err)
		}
	}
	return s.commitAndPush(ctx, name, message)
}

// Head returns the commit the server's branch points to in a repository.
func (s *Server) Head(ctx context.Context, name string) (string, error) {
	if !repoName.MatchString(name) {
		return "", fmt.Errorf("gitserver: bad repository name %q", name)
	}
	return s.output(ctx, filepath.Join(s.dir, "repos", name+".git"), "rev-parse", "refs/heads/"+s.opts.Branch)
}

// Git runs git with args in a served (bare) repository and returns its
// trimmed standard output, for tests that inspect what clients pushed
// (other branches, notes: `log`, `show`, `notes --ref NS show`,
// `rev-parse`).
func (s *Server) Git(ctx context.Context, name string, args ...string) (string, error) {
	if !repoName.MatchString(name) {
		return "", fmt.Errorf("gitserver: bad repository name %q", name)
	}
	return s.output(ctx, filepath.Join(s.dir, "repos", name+".git"), args...)
}

func (s *Server) commitAndPush(ctx context.Context, name, message string) (string, error) {
	work := filepath.Join(s.dir, "work", name)
	if _, err := s.output(ctx, work, "add", "--all"); err != nil {
		return "", err
	}
	if _, err := s.output(ctx, work, "commit", "--quiet", "--allow-empty", "-m", message); err != nil {
		return "", err
	}
	if _, err := s.output(ctx, work, "push", "--quiet", "origin", "HEAD:refs/heads/"+s.opts.Branch); err != nil {
		return "", err
	}
	return s.output(ctx, work, "rev-parse", "HEAD")
}

// output runs git in dir with a clean environment and returns its trimmed
// standard output; the error carries standard error.
func (s *Server) output(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.CommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.git, args...)
	cmd.Dir = dir
	cmd.Env = []string{
		"HOME=" + s.home,
		"PATH=" + os.Getenv("PATH"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=" + s.opts.AuthorName,
		"GIT_AUTHOR_EMAIL=" + s.opts.AuthorEmail,
		"GIT_COMMITTER_NAME=" + s.opts.AuthorName,
		"GIT_COMMITTER_EMAIL=" + s.opts.AuthorEmail,
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = errors.Join(err, ctx.Err())
		}
		return "", fmt.Errorf("gitserver: git %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// copyFS writes every regular file of src under dir.
func copyFS(dir string, src fs.FS) error {
	return fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", p)
		}
		data, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
