package testenv

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kubegitops/gitops/internal/toolbuild"
)

var (
	//go:embed tools/go.mod.txt
	toolsGoMod []byte
	//go:embed tools/go.sum.txt
	toolsGoSum []byte
	//go:embed tools/tools.go.txt
	toolsGo []byte
)

// Versions of the programs the tools module builds.
const (
	KubernetesVersion = "v1.37.2"
	kubeMinor         = "37"
)

// Binaries are the paths of the cluster's programs.
type Binaries struct {
	// Etcd is the path of etcd.
	Etcd string
	// APIServer is the path of kube-apiserver.
	APIServer string
	// ControllerManager is the path of kube-controller-manager.
	ControllerManager string
	// Scheduler is the path of kube-scheduler.
	Scheduler string
	// Kwok is the path of kwok.
	Kwok string
	// KwokStages is the stage configuration kwok needs to make nodes Ready
	// and Pods run (taken from the kwok module's "fast" stages).
	KwokStages string
	// Kubectl is built only by EnsureKubectl, for comparisons.
	Kubectl string
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
	// Log, when set, receives progress of the build.
	Log func(format string, args ...any)
}

// DefaultBuildOptions returns build options taken from the environment.
func DefaultBuildOptions() BuildOptions {
	return BuildOptions{CacheDir: os.Getenv(EnvCacheDir), AssetsDir: os.Getenv(EnvKubebuilderAssets)}
}

func toolsModule() toolbuild.Module {
	return toolbuild.Module{
		Name:  "kubegitops-testenv",
		GoMod: toolsGoMod, GoSum: toolsGoSum, ToolsGo: toolsGo,
		LDFlags: "-s -w -X k8s.io/component-base/version.gitVersion=" + KubernetesVersion +
			" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=" + kubeMinor,
	}
}

func (o BuildOptions) toolbuild() toolbuild.Options {
	dir := o.CacheDir
	if dir == "" {
		dir = os.Getenv(EnvCacheDir)
	}
	return toolbuild.Options{CacheDir: dir, GoCommand: o.GoCommand, Log: o.Log}
}

var (
	progEtcd       = toolbuild.Program{Name: "etcd", Package: "go.etcd.io/etcd/server/v3"}
	progAPIServer  = toolbuild.Program{Name: "kube-apiserver", Package: "k8s.io/kubernetes/cmd/kube-apiserver"}
	progController = toolbuild.Program{Name: "kube-controller-manager", Package: "k8s.io/kubernetes/cmd/kube-controller-manager"}
	progScheduler  = toolbuild.Program{Name: "kube-scheduler", Package: "k8s.io/kubernetes/cmd/kube-scheduler"}
	progKwok       = toolbuild.Program{Name: "kwok", Package: "sigs.k8s.io/kwok/cmd/kwok"}
	progKubectl    = toolbuild.Program{Name: "kubectl", Package: "k8s.io/kubernetes/cmd/kubectl"}
)

const kwokStagesFile = "kwok-stages.yaml"

var kwokStageFiles = []string{
	"kustomize/stage/node/fast/node-initialize.yaml",
	"kustomize/stage/pod/fast/pod-ready.yaml",
	"kustomize/stage/pod/fast/pod-complete.yaml",
	"kustomize/stage/pod/fast/pod-delete.yaml",
}

// EnsureBinaries returns the cluster's programs, building those it cannot
// find. With full false only etcd and kube-apiserver are required. Programs
// present in AssetsDir are used as they are. Builds are serialised across
// processes, so parallel test packages build once and share the result.
func EnsureBinaries(ctx context.Context, full bool, opts BuildOptions) (Binaries, error) {
	var b Binaries
	targets := map[*string]toolbuild.Program{&b.Etcd: progEtcd, &b.APIServer: progAPIServer}
	if full {
		targets[&b.ControllerManager] = progController
		targets[&b.Scheduler] = progScheduler
		targets[&b.Kwok] = progKwok
	}
	var build []toolbuild.Program
	for field, p := range targets {
		if opts.AssetsDir != "" && toolbuild.IsExecutable(filepath.Join(opts.AssetsDir, p.Name)) {
			*field = filepath.Join(opts.AssetsDir, p.Name)
			continue
		}
		build = append(build, p)
	}
	if len(build) == 0 && !full {
		return b, nil
	}
	var needStages func(string) bool
	var writeStages func(context.Context, string, string) error
	if full {
		needStages = func(binDir string) bool { _, err := os.Stat(filepath.Join(binDir, kwokStagesFile)); return err != nil }
		writeStages = func(ctx context.Context, src, binDir string) error {
			if !needStages(binDir) {
				return nil
			}
			return writeKwokStages(ctx, opts.toolbuild(), src, filepath.Join(binDir, kwokStagesFile))
		}
	}
	paths, err := toolsModule().Ensure(ctx, build, opts.toolbuild(), needStages, writeStages)
	if err != nil {
		return Binaries{}, fmt.Errorf("testenv: %w", err)
	}
	for field, p := range targets {
		if *field == "" {
			*field = paths[p.Name]
		}
	}
	if full {
		binDir, _ := toolsModule().BinDir(opts.toolbuild())
		b.KwokStages = filepath.Join(binDir, kwokStagesFile)
	}
	return b, nil
}

// EnsureKubectl returns a kubectl of the cluster's version, built from the
// same tools module, for comparisons in benchmarks.
func EnsureKubectl(ctx context.Context, opts BuildOptions) (string, error) {
	if opts.AssetsDir != "" && toolbuild.IsExecutable(filepath.Join(opts.AssetsDir, "kubectl")) {
		return filepath.Join(opts.AssetsDir, "kubectl"), nil
	}
	paths, err := toolsModule().Ensure(ctx, []toolbuild.Program{progKubectl}, opts.toolbuild(), nil, nil)
	if err != nil {
		return "", fmt.Errorf("testenv: %w", err)
	}
	return paths["kubectl"], nil
}

// writeKwokStages joins kwok's "fast" node and pod stages into one file.
func writeKwokStages(ctx context.Context, opts toolbuild.Options, src, dest string) error {
	dir, err := toolbuild.ModuleDir(ctx, opts, src, "sigs.k8s.io/kwok")
	if err != nil {
		return err
	}
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
