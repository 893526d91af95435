package toolbuild

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Module is an embedded Go module that pins a set of programs.
type Module struct {
	// Name names the cache folder: <user cache>/<Name>/<hash>.
	Name string
	// GoMod, GoSum and ToolsGo are the module's files.
	GoMod, GoSum, ToolsGo []byte
	// LDFlags are passed to go build.
	LDFlags string
}

// Program is one program of a module.
type Program struct {
	// Name is the file name of the installed binary.
	Name string
	// Package is the main package's import path.
	Package string
}

// Options say where binaries are cached and how they are built.
type Options struct {
	// CacheDir overrides the versioned cache folder.
	CacheDir string
	// GoCommand is the go tool. Default: "go" on PATH, else GOROOT's.
	GoCommand string
	// Log, when set, is told what is being built.
	Log func(format string, args ...any)
}

// CacheDir returns the folder where m's binaries live (in its "bin"
// subfolder): opts.CacheDir when set, else a folder of the user cache named
// after a hash of the module's files, build flags and platform.
func (m Module) CacheDir(opts Options) (string, error) {
	if opts.CacheDir != "" {
		return opts.CacheDir, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("toolbuild: no user cache folder: %w", err)
	}
	h := sha256.New()
	h.Write(m.GoMod)
	h.Write(m.GoSum)
	h.Write([]byte(m.LDFlags + runtime.GOOS + runtime.GOARCH))
	return filepath.Join(base, m.Name, hex.EncodeToString(h.Sum(nil))[:16]), nil
}

// BinDir returns the folder of built binaries.
func (m Module) BinDir(opts Options) (string, error) {
	dir, err := m.CacheDir(opts)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "bin"), nil
}

// Ensure returns the path of each program, building those not yet in the
// cache. after, when set, runs under the build lock once the programs are
// installed, with the module's source folder and the bin folder (to write
// companion files); it also runs when nothing needed building but
// needAfter reports that its output is missing.
func (m Module) Ensure(ctx context.Context, progs []Program, opts Options, needAfter func(binDir string) bool,
	after func(ctx context.Context, srcDir, binDir string) error) (map[string]string, error) {
	cacheDir, err := m.CacheDir(opts)
	if err != nil {
		return nil, err
	}
	binDir := filepath.Join(cacheDir, "bin")
	missing := func() []Program {
		var out []Program
		for _, p := range progs {
			if !IsExecutable(filepath.Join(binDir, p.Name)) {
				out = append(out, p)
			}
		}
		return out
	}
	paths := func() map[string]string {
		out := map[string]string{}
		for _, p := range progs {
			out[p.Name] = filepath.Join(binDir, p.Name)
		}
		return out
	}
	afterMissing := func() bool { return after != nil && needAfter != nil && needAfter(binDir) }
	if len(missing()) == 0 && !afterMissing() {
		return paths(), nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil, fmt.Errorf("toolbuild: %w", err)
	}
	unlock, err := lockFile(ctx, filepath.Join(cacheDir, ".lock"))
	if err != nil {
		return nil, fmt.Errorf("toolbuild: lock %s: %w", cacheDir, err)
	}
	defer unlock()
	todo := missing() // another process may have built them while we waited
	if len(todo) == 0 && !afterMissing() {
		return paths(), nil
	}
	src, err := m.writeSource(cacheDir)
	if err != nil {
		return nil, err
	}
	if len(todo) > 0 {
		if err := m.build(ctx, cacheDir, src, binDir, todo, opts); err != nil {
			return nil, err
		}
	}
	if after != nil {
		if err := after(ctx, src, binDir); err != nil {
			return nil, err
		}
	}
	if left := missing(); len(left) > 0 {
		return nil, fmt.Errorf("toolbuild: %s still missing after the build", left[0].Name)
	}
	return paths(), nil
}

func (m Module) writeSource(cacheDir string) (string, error) {
	src := filepath.Join(cacheDir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", fmt.Errorf("toolbuild: %w", err)
	}
	for name, data := range map[string][]byte{"go.mod": m.GoMod, "go.sum": m.GoSum, "tools.go": m.ToolsGo} {
		if err := os.WriteFile(filepath.Join(src, name), data, 0o644); err != nil {
			return "", fmt.Errorf("toolbuild: %w", err)
		}
	}
	return src, nil
}

// build compiles todo into a staging folder, then renames each binary into
// binDir.
func (m Module) build(ctx context.Context, cacheDir, src, binDir string, todo []Program, opts Options) error {
	staging, err := os.MkdirTemp(cacheDir, "build-")
	if err != nil {
		return fmt.Errorf("toolbuild: %w", err)
	}
	defer os.RemoveAll(staging)
	var names []string
	for _, p := range todo {
		names = append(names, p.Name)
	}
	if opts.Log != nil {
		opts.Log("building %s (a first build can take several minutes)", strings.Join(names, ", "))
	}
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return fmt.Errorf("toolbuild: %w", err)
	}
	// One go build for all of them: the go command compiles their shared
	// packages once and overlaps one program's link with another's
	// compiles, where a build per program ran the links one after another.
	// go build -o dir/ names each binary after its import path
	// (execName); programs whose names would collide are built apart.
	byExec := map[string]Program{}
	var together, apart []Program
	for _, p := range todo {
		if _, dup := byExec[execName(p.Package)]; dup {
			apart = append(apart, p)
			continue
		}
		byExec[execName(p.Package)] = p
		together = append(together, p)
	}
	var pkgs []string
	for _, p := range together {
		pkgs = append(pkgs, p.Package)
	}
	args := append([]string{"build", "-trimpath", "-ldflags", m.LDFlags, "-o", staging + string(filepath.Separator)}, pkgs...)
	if log, err := GoRun(ctx, opts, src, args...); err != nil {
		return fmt.Errorf("toolbuild: go build %s: %w\n%s", strings.Join(pkgs, " "), err, Tail(log, 4000))
	}
	for _, p := range together {
		if err := os.Rename(filepath.Join(staging, execName(p.Package)), filepath.Join(binDir, p.Name)); err != nil {
			return fmt.Errorf("toolbuild: install %s: %w", p.Name, err)
		}
	}
	for _, p := range apart {
		out := filepath.Join(staging, p.Name)
		args := []string{"build", "-trimpath", "-ldflags", m.LDFlags, "-o", out, p.Package}
		if log, err := GoRun(ctx, opts, src, args...); err != nil {
			return fmt.Errorf("toolbuild: go build %s: %w\n%s", p.Package, err, Tail(log, 4000))
		}
		if err := os.Rename(out, filepath.Join(binDir, p.Name)); err != nil {
			return fmt.Errorf("toolbuild: install %s: %w", p.Name, err)
		}
	}
	return nil
}

// execName is the file name go build gives the binary of the main package
// importPath: its last element, or the one before a major-version suffix
// (go.etcd.io/etcd/server/v3 is "server"), as cmd/go's DefaultExecName.
func execName(importPath string) string {
	elems := strings.Split(importPath, "/")
	name := elems[len(elems)-1]
	if len(elems) > 1 && len(name) > 1 && name[0] == 'v' && name[1] != '0' && name != "v1" && strings.Trim(name[1:], "0123456789") == "" {
		name = elems[len(elems)-2]
	}
	return name
}

// ModuleDir returns where the module cache holds modulePath, as required by
// the module in src.
func ModuleDir(ctx context.Context, opts Options, src, modulePath string) (string, error) {
	out, err := GoRun(ctx, opts, src, "list", "-m", "-f", "{{.Dir}}", modulePath)
	if err != nil {
		return "", fmt.Errorf("toolbuild: locate %s: %w\n%s", modulePath, err, Tail(out, 2000))
	}
	return strings.TrimSpace(string(out)), nil
}

// GoRun runs the go tool in dir with the module read-only and no workspace.
func GoRun(ctx context.Context, opts Options, dir string, args ...string) ([]byte, error) {
	return goRunEnv(ctx, opts, dir, "", args...)
}

// goRunEnv is GoRun with one more variable of the environment
// ("NAME=value"; none when empty).
func goRunEnv(ctx context.Context, opts Options, dir, env string, args ...string) ([]byte, error) {
	goCmd := opts.GoCommand
	if goCmd == "" {
		if p, err := exec.LookPath("go"); err == nil {
			goCmd = p
		} else {
			goCmd = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
	}
	cmd := exec.CommandContext(ctx, goCmd, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "GOWORK=off")
	if env != "" {
		cmd.Env = append(cmd.Env, env)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// IsExecutable reports whether path is a regular file with an execute bit.
func IsExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// Tail returns at most the last n bytes of b, as text.
func Tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
