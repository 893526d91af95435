package kustomize

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/resource"
)

// Binary is a kustomize program registered under a name (Argo CD's
// argocd-cm kustomize.version.<name>: <path>), for the apps whose
// kustomize.version is that name.
type Binary struct {
	// Path is the program's absolute path.
	Path string
	// BuildOptions are the arguments given after `build <path>` (Argo CD's
	// kustomize.buildOptions.<name>, else kustomize.buildOptions, split on
	// white space).
	BuildOptions []string `json:",omitempty"`
}

// VersionNotRegisteredError is returned for an app whose kustomize.version
// names no Binary. Its text is Argo CD's (KustomizeVersionNotRegisteredError).
type VersionNotRegisteredError struct {
	// Version is the name the app asked for.
	Version string
}

// Error implements error.
func (e *VersionNotRegisteredError) Error() string {
	return fmt.Sprintf("kustomize version %s is not registered", e.Version)
}

// Unwrap makes the error render.ErrInvalidInput.
func (e *VersionNotRegisteredError) Unwrap() error { return render.ErrInvalidInput }

// ErrBinaryTimeout is returned when a kustomize binary runs past
// Options.BinaryTimeout.
var ErrBinaryTimeout = errors.New("kustomize binary timed out")

// Defaults of the binary runs.
const (
	defaultBinaryTimeout = 90 * time.Second // Argo CD's ARGOCD_EXEC_TIMEOUT
	defaultBinaryOutput  = 64 << 20
)

// renderBinary builds the app with the kustomize binary registered as
// version, as Argo CD's repo server does: on a private copy of the tree
// (the overrides written into the copy's kustomization file, where Argo
// CD runs `kustomize edit`), `<binary> build <path> <build options>` from
// the copy's root, with a fresh environment (PATH, HOME and TMPDIR in the
// work directory, and Argo CD's build environment), bounded by
// Options.BinaryTimeout and Options.MaxBinaryOutputBytes.
func (r *Renderer) renderBinary(ctx context.Context, in render.Input, root *render.Root, dir string) ([]*unstructured.Unstructured, error) {
	version := in.Kustomize.Version
	bin, ok := r.opts.Versions[version]
	if !ok || bin.Path == "" {
		return nil, &VersionNotRegisteredError{Version: version}
	}
	charted := r.opts.Helm != nil || hasEnableHelm(bin.BuildOptions)
	fsys := NewFileSystem(root)
	kfile, k, err := readKustomization(root, dir)
	if err != nil {
		return nil, err
	}
	var overlay []byte
	if hasOverrides(*in.Kustomize) {
		if overlay, err = applyOverrides(root, dir, kfile, k, *in.Kustomize); err != nil {
			return nil, err
		}
	}
	// Remote bases and files are the binary's to fetch only when the
	// renderer allows remote resources, as for the in-process build.
	if _, err := checkRemote(root, fsys, dir, r.opts.AllowRemoteResources, charted); err != nil {
		return nil, err
	}
	top, err := os.MkdirTemp(r.opts.TempDir, "gitops-kustomize-*")
	if err != nil {
		return nil, fmt.Errorf("kustomize work directory: %w", err)
	}
	defer func() { _ = os.RemoveAll(top) }()
	tree, home := filepath.Join(top, "tree"), filepath.Join(top, "home")
	for _, d := range []string{tree, home} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, err
		}
	}
	if err := render.CopyTree(ctx, root, ".", tree); err != nil {
		return nil, err
	}
	if overlay != nil {
		if err := os.WriteFile(filepath.Join(tree, filepath.FromSlash(kfile)), overlay, 0o600); err != nil {
			return nil, err
		}
	}
	args := append([]string{"build", dir}, bin.BuildOptions...)
	out, err := r.runBinary(ctx, bin.Path, args, tree, binaryEnv(in, home))
	if err != nil {
		return nil, fmt.Errorf("kustomize version %s (%s): %w", version, bin.Path, err)
	}
	return resource.Decode(path.Join(in.Path, "(kustomize "+version+" build)"), out, r.opts.Limits.Decode)
}

// runBinary runs the program and returns its standard output.
func (r *Renderer) runBinary(ctx context.Context, bin string, args []string, dir string, env []string) ([]byte, error) {
	timeout := r.opts.BinaryTimeout
	if timeout <= 0 {
		timeout = defaultBinaryTimeout
	}
	limit := r.opts.MaxBinaryOutputBytes
	if limit <= 0 {
		limit = defaultBinaryOutput
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.WaitDelay = 2 * time.Second
	stdout := render.NewOutputBuffer(limit, cancel)
	stderr := render.NewOutputBuffer(64<<10, nil)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	switch {
	case stdout.Overflowed():
		return nil, fmt.Errorf("%w: output past %d bytes", render.ErrTooLarge, limit)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("%w after %s", ErrBinaryTimeout, timeout)
	case err != nil:
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 2048 {
			msg = "..." + msg[len(msg)-2048:]
		}
		return nil, fmt.Errorf("%w: %s", err, msg)
	}
	return stdout.Bytes(), nil
}

// binaryEnv is the environment of a kustomize binary: a fixed PATH, HOME
// and TMPDIR in the work directory, and the build environment. The host's
// own environment is not passed, so its secrets stay in the host.
func binaryEnv(in render.Input, home string) []string {
	env := map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "TMPDIR": home}
	for k, v := range in.Kustomize.BuildEnv {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// hasEnableHelm reports whether build options turn on helmCharts.
func hasEnableHelm(opts []string) bool {
	for _, o := range opts {
		if o == "--enable-helm" || strings.HasPrefix(o, "--enable-helm=") {
			return true
		}
	}
	return false
}

// hasOverrides reports whether o changes the kustomization file: without
// overrides the binary reads the file as committed.
func hasOverrides(o render.KustomizeSource) bool {
	o.Version, o.BuildEnv, o.CommonAnnotationsEnvsubst = "", nil, false
	return !reflect.DeepEqual(o, render.KustomizeSource{})
}
