package benchdata

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// GitHistory creates the bare repository bare with commits commits on
// main over files files of about 300 bytes (the first commit adds them
// all, each later one rewrites one), with git fast-import, and returns the
// tip commit. It needs the git command.
func GitHistory(ctx context.Context, bare string, commits, files int) (string, error) {
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_DIR="+bare)
	if out, err := runGit(ctx, env, "", "init", "-q", "--bare", "-b", "main", bare); err != nil {
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
	out, err := runGit(ctx, env, bare, "rev-parse", "main")
	if err != nil {
		return "", fmt.Errorf("%v: %s", err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// runGit runs git with env in dir and returns its combined output.
func runGit(ctx context.Context, env []string, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = env
	return cmd.CombinedOutput()
}
