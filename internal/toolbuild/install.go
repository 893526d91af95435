package toolbuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
)

// Local is a program of this repository (or of one of its side modules,
// such as sops/) that tests run as a program: its source is the tree under
// test, so it is installed with go install, which links it again only when
// a source file or a flag changed and otherwise leaves the installed binary
// as it is.
type Local struct {
	// Dir is the folder of the program's module (or any folder in it):
	// the go command runs there.
	Dir string
	// Package is the main package, relative to Dir ("./cmd/gitops-sops").
	Package string
	// Flags are go install's build flags ("-race").
	Flags []string
}

// Install returns the path of l's binary, installed into a folder of the
// user cache named after l's folder and flags (opts.CacheDir when set), so
// that two checkouts of the repository never share one. It holds a lock
// while go install runs, so parallel test packages install once and share
// the result. It sets no deadline of its own: ctx's is the caller's.
func (l Local) Install(ctx context.Context, opts Options) (string, error) {
	dir, err := filepath.Abs(l.Dir)
	if err != nil {
		return "", fmt.Errorf("toolbuild: %w", err)
	}
	binDir := opts.CacheDir
	if binDir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("toolbuild: no user cache folder: %w", err)
		}
		h := sha256.Sum256([]byte(dir + "\x00" + strings.Join(l.Flags, "\x00") + "\x00" + runtime.GOOS + runtime.GOARCH))
		binDir = filepath.Join(base, "kubegitops-programs", hex.EncodeToString(h[:])[:16])
	}
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return "", fmt.Errorf("toolbuild: %w", err)
	}
	unlock, err := lockFile(ctx, filepath.Join(binDir, ".lock"))
	if err != nil {
		return "", fmt.Errorf("toolbuild: lock %s: %w", binDir, err)
	}
	defer unlock()
	args := append(append([]string{"install"}, l.Flags...), l.Package)
	if log, err := goRunEnv(ctx, opts, dir, "GOBIN="+binDir, args...); err != nil {
		return "", fmt.Errorf("toolbuild: go install %s in %s: %w\n%s", l.Package, dir, err, Tail(log, 4000))
	}
	bin := filepath.Join(binDir, execName(path.Clean(filepath.ToSlash(l.Package))))
	if !IsExecutable(bin) {
		return "", fmt.Errorf("toolbuild: go install %s left no program at %s", l.Package, bin)
	}
	return bin, nil
}
