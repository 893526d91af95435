package apicheck

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"

	"github.com/kubegitops/gitops/internal/toolbuild"
)

var (
	//go:embed module/go.mod.txt
	goMod []byte
	//go:embed module/go.sum.txt
	goSum []byte
	//go:embed module/tools.go.txt
	toolsGo []byte
)

// ReleaseFile is where a module records its last release, relative to its
// root.
const ReleaseFile = "api/RELEASE"

// Options say which module to check and how.
type Options struct {
	// Dir is the module's root: it holds go.mod, api/RELEASE and
	// CHANGELOG.md, in a git work tree that has the release's commit.
	Dir string
	// GoFlags is the GOFLAGS apidiff's go list runs with. The default,
	// "-race", is what make vet compiles with, so the working tree's
	// packages are found compiled in the build cache.
	GoFlags string
	// Tools overrides where apidiff is built and cached (toolbuild's
	// CacheDir).
	Tools toolbuild.Options
	// ExportDir is where the release's exported API is cached, one file
	// per module, commit and Go version. Default: beside apidiff in the
	// user cache.
	ExportDir string
}

// DefaultOptions checks the module in the current folder.
func DefaultOptions() Options {
	return Options{Dir: ".", GoFlags: "-race"}
}

// Release is the release the API is compared with.
type Release struct {
	// Version is the release's tag, such as v0.1.0.
	Version string
	// Commit is the release's full commit hash.
	Commit string
}

var commitHash = regexp.MustCompile(`^[0-9a-f]{40}$`)

// ReadRelease reads the release recorded in dir's api/RELEASE: one line
// "<version> <commit>"; blank lines and lines starting with # are
// comments.
func ReadRelease(dir string) (Release, error) {
	path := filepath.Join(dir, ReleaseFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return Release{}, fmt.Errorf("apicheck: %w", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 || !commitHash.MatchString(f[1]) {
			return Release{}, fmt.Errorf("apicheck: %s: %q is not \"<version> <40-hex commit>\"", path, line)
		}
		return Release{Version: f[0], Commit: f[1]}, nil
	}
	return Release{}, fmt.Errorf("apicheck: %s names no release", path)
}

// Result is what Check found.
type Result struct {
	// Release is the release compared with.
	Release Release
	// Breaking are the incompatible changes CHANGELOG.md does not list:
	// the check fails when there is one.
	Breaking []Change
	// Listed are the incompatible changes CHANGELOG.md's Unreleased
	// section lists.
	Listed []Change
}

func module() toolbuild.Module {
	return toolbuild.Module{Name: "kubegitops-apidiff", GoMod: goMod, GoSum: goSum, ToolsGo: toolsGo}
}

// Apidiff returns the path of golang.org/x/exp's apidiff, building it
// first when it is not in the user cache.
func Apidiff(ctx context.Context, opts toolbuild.Options) (string, error) {
	paths, err := module().Ensure(ctx, []toolbuild.Program{{Name: "apidiff", Package: "golang.org/x/exp/cmd/apidiff"}}, opts, nil, nil)
	if err != nil {
		return "", fmt.Errorf("apicheck: %w", err)
	}
	return paths["apidiff"], nil
}

// Check compares the API of the module in opts.Dir with the API of the
// release api/RELEASE names, and sorts apidiff's incompatible changes into
// those CHANGELOG.md lists and those it does not.
func Check(ctx context.Context, opts Options) (Result, error) {
	rel, err := ReadRelease(opts.Dir)
	if err != nil {
		return Result{}, err
	}
	res := Result{Release: rel}
	changelog, err := os.ReadFile(filepath.Join(opts.Dir, "CHANGELOG.md"))
	if err != nil {
		return res, fmt.Errorf("apicheck: %w", err)
	}
	modPath, err := modulePath(opts.Dir)
	if err != nil {
		return res, err
	}
	tool, err := Apidiff(ctx, opts.Tools)
	if err != nil {
		return res, err
	}
	old, err := releaseAPI(ctx, opts, tool, modPath, rel)
	if err != nil {
		return res, err
	}
	out, err := run(ctx, opts, opts.Dir, tool, "-m", "-incompatible", old, modPath)
	if err != nil {
		return res, fmt.Errorf("apicheck: apidiff %s against the working tree: %w\n%s", rel.Version, err, out)
	}
	listed := Listed(string(changelog))
	for _, c := range ParseReport(out, modPath) {
		if c.Accepted(listed) {
			res.Listed = append(res.Listed, c)
		} else {
			res.Breaking = append(res.Breaking, c)
		}
	}
	return res, nil
}

// releaseAPI returns the file holding the exported API of the release,
// writing it first when the cache lacks it: the release's tree is taken
// from git into a temporary folder and apidiff exports its packages there.
func releaseAPI(ctx context.Context, opts Options, tool, modPath string, rel Release) (string, error) {
	dir := opts.ExportDir
	if dir == "" {
		binDir, err := module().BinDir(opts.Tools)
		if err != nil {
			return "", fmt.Errorf("apicheck: %w", err)
		}
		dir = filepath.Join(filepath.Dir(binDir), "exports")
	}
	file := filepath.Join(dir, fmt.Sprintf("%s-%s-%s.zip", strings.ReplaceAll(modPath, "/", "_"), rel.Commit, runtime.Version()))
	if _, err := os.Stat(file); err == nil {
		return file, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("apicheck: %w", err)
	}
	src, err := os.MkdirTemp("", "apicheck-release-")
	if err != nil {
		return "", fmt.Errorf("apicheck: %w", err)
	}
	defer os.RemoveAll(src)
	if err := extract(ctx, opts.Dir, rel, src); err != nil {
		return "", err
	}
	// apidiff writes into a file of the cache folder, renamed into place
	// whole once written: a reader never sees half an export.
	staged, err := os.CreateTemp(dir, "export-")
	if err != nil {
		return "", fmt.Errorf("apicheck: %w", err)
	}
	staged.Close()
	defer os.Remove(staged.Name())
	if out, err := run(ctx, opts, src, tool, "-m", "-w", staged.Name(), modPath); err != nil {
		return "", fmt.Errorf("apicheck: apidiff: export the API of %s (%s): %w\n%s", rel.Version, rel.Commit, err, out)
	}
	if err := os.Rename(staged.Name(), file); err != nil {
		return "", fmt.Errorf("apicheck: %w", err)
	}
	return file, nil
}

// extract writes the tree of the release's commit into dst.
func extract(ctx context.Context, repo string, rel Release, dst string) error {
	tar := filepath.Join(dst, "release.tar")
	cmd := exec.CommandContext(ctx, "git", "-C", repo, "archive", "--format=tar", "-o", tar, rel.Commit)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("apicheck: %s names %s at %s, which git cannot read here (a shallow clone? git fetch --unshallow): %w\n%s",
			ReleaseFile, rel.Version, rel.Commit, err, out)
	}
	cmd = exec.CommandContext(ctx, "tar", "-xf", tar, "-C", dst)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("apicheck: unpack %s: %w\n%s", rel.Commit, err, out)
	}
	return os.Remove(tar)
}

// run runs apidiff in dir and returns its standard output, or, when it
// fails, both its outputs.
func run(ctx context.Context, opts Options, dir, tool string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, tool, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS="+opts.GoFlags)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String() + quiet(stderr.String()), err
	}
	return stdout.String(), nil
}

// quiet drops apidiff's note on each internal package it leaves out
// from its standard error, keeping what went wrong.
func quiet(stderr string) string {
	var keep []string
	for _, line := range strings.Split(stderr, "\n") {
		if !strings.HasPrefix(line, "Ignoring internal package ") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

var moduleLine = regexp.MustCompile(`(?m)^module\s+"?([^\s"]+)"?\s*$`)

// modulePath reads the module path from dir's go.mod.
func modulePath(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("apicheck: %w", err)
	}
	m := moduleLine.FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("apicheck: %s has no module line", filepath.Join(dir, "go.mod"))
	}
	return string(m[1]), nil
}
