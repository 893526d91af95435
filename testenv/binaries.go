package testenv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

//go:embed tools/go.mod.txt tools/go.sum.txt tools/tools.go.txt
var toolsModule embed.FS

// Versions of the programs the tools module builds.
const (
	KubernetesVersion = "v1.37.2"
	kubeMinor         = "37"
)

// Binaries are the paths of the cluster's programs.
type Binaries struct {
	Etcd              string
	APIServer         string
	ControllerManager string
	Scheduler         string
	Kwok              string
	// KwokStages is the stage configuration kwok needs to make nodes Ready
	// and Pods run (taken from the kwok module's "fast" stages).
	KwokStages string
}

// BuildOptions say where binaries are looked for and built.
type BuildOptions struct {
	// CacheDir is the folder of built binaries. Default: $GITOPS_TESTENV_CACHE,
	// else <os.UserCacheDir()>/kubegitops-testenv/<hash of the tools module>.
	CacheDir string
	// AssetsDir is a folder of ready binaries (named etcd, kube-apiserver,
	// ...), used before building. Default: $KUBEBUILDER_ASSETS.
	AssetsDir string
	// GoCommand is the go tool used to build. Default: "go" on PATH, else
	// the go of the running toolchain's GOROOT.
	GoCommand string
	// Log, when set, receives the build's output.
	Log func(format string, args ...any)
}

// DefaultBuildOptions returns build options taken from the environment.
func DefaultBuildOptions() BuildOptions {
	return BuildOptions{CacheDir: os.Getenv(EnvCacheDir), AssetsDir: os.Getenv(EnvKubebuilderAssets)}
}

type tool struct {
	name, pkg string
	field     func(*Binaries) *string
	full      bool // needed only by a full cluster
}

var tools = []tool{
	{"etcd", "go.etcd.io/etcd/server/v3", func(b *Binaries) *string { return &b.Etcd }, false},
	{"kube-apiserver", "k8s.io/kubernetes/cmd/kube-apiserver", func(b *Binaries) *string { return &b.APIServer }, false},
	{"kube-controller-manager", "k8s.io/kubernetes/cmd/kube-controller-manager", func(b *Binaries) *string { return &b.ControllerManager }, true},
	{"kube-scheduler", "k8s.io/kubernetes/cmd/kube-scheduler", func(b *Binaries) *string { return &b.Scheduler }, true},
	{"kwok", "sigs.k8s.io/kwok/cmd/kwok", func(b *Binaries) *string { return &b.Kwok }, true},
}

var kwokStageFiles = []string{
	"kustomize/stage/node/fast/node-initialize.yaml",
	"kustomize/stage/pod/fast/pod-ready.yaml",
	"kustomize/stage/pod/fast/pod-complete.yaml",
	"kustomize/stage/pod/fast/pod-delete.yaml",
}

func buildLDFlags() string {
	return "-s -w -X k8s.io/component-base/version.gitVersion=" + KubernetesVersion +
		" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=" + kubeMinor
}

// EnsureBinaries returns the cluster's programs, building those it cannot
// find. With full false only etcd and kube-apiserver are required. Builds are
// serialised across processes by a lock file, so parallel test packages
// build once and share the result.
func EnsureBinaries(ctx context.Context, full bool, opts BuildOptions) (Binaries, error) {
	cacheDir, err := opts.cacheDir()
	if err != nil {
		return Binaries{}, err
	}
	binDir := filepath.Join(cacheDir, "bin")
	var b Binaries
	missing := func() []tool {
		var out []tool
		for _, t := range tools {
			if t.full && !full {
				continue
			}
			if p := findBinary(t.name, opts.AssetsDir, binDir); p != "" {
				*t.field(&b) = p
				continue
			}
			out = append(out, t)
		}
		if full {
			if p := filepath.Join(binDir, "kwok-stages.yaml"); fileExists(p) {
				b.KwokStages = p
			} else if !containsTool(out, "kwok") {
				out = append(out, tools[4]) // rebuilding kwok also writes its stages
			}
		}
		return out
	}
	if len(missing()) == 0 {
		return b, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return Binaries{}, fmt.Errorf("testenv: cache folder: %w", err)
	}
	unlock, err := lockFile(ctx, filepath.Join(cacheDir, ".lock"))
	if err != nil {
		return Binaries{}, fmt.Errorf("testenv: lock the binary cache: %w", err)
	}
	defer unlock()
	todo := missing() // another process may have built them while we waited
	if len(todo) == 0 {
		return b, nil
	}
	if err := opts.build(ctx, cacheDir, todo); err != nil {
		return Binaries{}, err
	}
	if left := missing(); len(left) > 0 {
		return Binaries{}, fmt.Errorf("testenv: %s still missing after the build", left[0].name)
	}
	return b, nil
}

func containsTool(ts []tool, name string) bool {
	for _, t := range ts {
		if t.name == name {
			return true
		}
	}
	return false
}

func findBinary(name string, dirs ...string) string {
	for _, d := range dirs {
		if d == "" {
			continue
		}
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// cacheDir is versioned by the content of the tools module and the build
// flags, so changing a pinned version never reuses stale binaries.
func (o BuildOptions) cacheDir() (string, error) {
	if o.CacheDir != "" {
		return o.CacheDir, nil
	}
	if d := os.Getenv(EnvCacheDir); d != "" {
		return d, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("testenv: no user cache folder (set %s): %w", EnvCacheDir, err)
	}
	h := sha256.New()
	for _, name := range []string{"tools/go.mod.txt", "tools/go.sum.txt"} {
		data, err := toolsModule.ReadFile(name)
		if err != nil {
			return "", err
		}
		h.Write(data)
	}
	h.Write([]byte(buildLDFlags() + runtime.GOOS + runtime.GOARCH))
	return filepath.Join(base, "kubegitops-testenv", hex.EncodeToString(h.Sum(nil))[:16]), nil
}

func (o BuildOptions) goCommand() string {
	if o.GoCommand != "" {
		return o.GoCommand
	}
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

func (o BuildOptions) logf(format string, args ...any) {
	if o.Log != nil {
		o.Log(format, args...)
	}
}

// build writes the tools module into cacheDir/src and builds the missing
// programs into a staging folder, then renames each into bin/ so that a
// reader never sees a half-written binary.
func (o BuildOptions) build(ctx context.Context, cacheDir string, todo []tool) error {
	src := filepath.Join(cacheDir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	for from, to := range map[string]string{"tools/go.mod.txt": "go.mod", "tools/go.sum.txt": "go.sum", "tools/tools.go.txt": "tools.go"} {
		data, _ := toolsModule.ReadFile(from)
		if err := os.WriteFile(filepath.Join(src, to), data, 0o644); err != nil {
			return fmt.Errorf("testenv: %w", err)
		}
	}
	staging, err := os.MkdirTemp(cacheDir, "build-")
	if err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	defer os.RemoveAll(staging)
	args := []string{"build", "-trimpath", "-ldflags", buildLDFlags(), "-o", staging + string(filepath.Separator)}
	var names []string
	for _, t := range todo {
		args = append(args, t.pkg)
		names = append(names, t.name)
	}
	o.logf("testenv: building %s (the first build takes several minutes)", strings.Join(names, ", "))
	if out, err := o.goRun(ctx, src, args...); err != nil {
		return fmt.Errorf("testenv: go build %s: %w\n%s", strings.Join(names, " "), err, tail(out, 4000))
	}
	binDir := filepath.Join(cacheDir, "bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	for _, t := range todo {
		built := filepath.Join(staging, t.name)
		if t.name == "etcd" {
			built = filepath.Join(staging, "server") // go names it after the path without its /v3 suffix
		}
		if err := os.Rename(built, filepath.Join(binDir, t.name)); err != nil {
			return fmt.Errorf("testenv: install %s: %w", t.name, err)
		}
		if t.name == "kwok" {
			if err := o.writeKwokStages(ctx, src, filepath.Join(binDir, "kwok-stages.yaml")); err != nil {
				return err
			}
		}
	}
	return nil
}

func (o BuildOptions) goRun(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, o.goCommand(), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "GOWORK=off")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// writeKwokStages joins kwok's "fast" node and pod stages into one file.
func (o BuildOptions) writeKwokStages(ctx context.Context, src, dest string) error {
	out, err := o.goRun(ctx, src, "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kwok")
	if err != nil {
		return fmt.Errorf("testenv: locate the kwok module: %w\n%s", err, tail(out, 2000))
	}
	dir := strings.TrimSpace(string(out))
	var stages bytes.Buffer
	for i, f := range kwokStageFiles {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			return fmt.Errorf("testenv: kwok stage: %w", err)
		}
		if i > 0 {
			stages.WriteString("\n---\n")
		}
		stages.Write(data)
	}
	tmp := dest + ".tmp"
	if err := os.WriteFile(tmp, stages.Bytes(), 0o644); err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	return os.Rename(tmp, dest)
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

var errLockTimeout = errors.New("timed out waiting for the lock")
