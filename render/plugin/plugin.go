package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/resource"
)

// Plugin is one configured command.
type Plugin struct {
	// Command is the program and its arguments; it runs in the private
	// copy of the application directory.
	Command []string
	// Env names host environment variables passed to the command.
	Env []string
	// Credentials are environment variables holding secrets, passed only
	// when GrantCredentials is set.
	Credentials map[string]string
	// GrantCredentials passes Credentials to the command.
	GrantCredentials bool
	// Timeout bounds one run. Default 60 s.
	Timeout time.Duration
	// MaxOutputBytes bounds standard output. Default 16 MiB.
	MaxOutputBytes int64
}

// Options configure the plugin renderer.
type Options struct {
	// Plugins are the commands that may run, by name.
	Plugins map[string]Plugin
	// Limits bound the files copied and the decoding of the output.
	Limits render.Limits
	// TempDir is where private copies are made. Default os.TempDir().
	TempDir string
}

// DefaultOptions returns no plugins and the default limits.
func DefaultOptions() Options { return Options{Limits: render.DefaultLimits()} }

// ErrUnknownPlugin is returned when Input.Plugin names no configured plugin.
var ErrUnknownPlugin = errors.New("unknown plugin")

// Renderer runs plugins.
type Renderer struct{ opts Options }

// New returns a plugin Renderer.
func New(opts Options) *Renderer {
	opts.Limits = opts.Limits.WithDefaults()
	return &Renderer{opts: opts}
}

// Identity implements render.Identifier. Credential values appear only as
// SHA-256 digests.
func (r *Renderer) Identity(render.Input) (render.Identity, error) {
	opts := r.opts
	opts.Plugins = make(map[string]Plugin, len(r.opts.Plugins))
	for name, p := range r.opts.Plugins {
		if len(p.Credentials) > 0 {
			hashed := make(map[string]string, len(p.Credentials))
			for k, v := range p.Credentials {
				sum := sha256.Sum256([]byte(v))
				hashed[k] = "sha256:" + hex.EncodeToString(sum[:])
			}
			p.Credentials = hashed
		}
		opts.Plugins[name] = p
	}
	return render.Identity{Tool: render.KindPlugin, Version: "exec/v1", Options: opts}, nil
}

// Render implements render.Renderer.
func (r *Renderer) Render(ctx context.Context, in render.Input) ([]*unstructured.Unstructured, error) {
	objs, err := r.render(ctx, in)
	return objs, render.Wrap(render.KindPlugin, in, err)
}

func (r *Renderer) render(ctx context.Context, in render.Input) ([]*unstructured.Unstructured, error) {
	if in.Plugin == nil {
		return nil, fmt.Errorf("%w: Input.Plugin is nil", render.ErrInvalidInput)
	}
	p, ok := r.opts.Plugins[in.Plugin.Name]
	if !ok || len(p.Command) == 0 {
		return nil, fmt.Errorf("%w %q", ErrUnknownPlugin, in.Plugin.Name)
	}
	if p.Timeout <= 0 {
		p.Timeout = 60 * time.Second
	}
	if p.MaxOutputBytes <= 0 {
		p.MaxOutputBytes = 16 << 20
	}
	root := render.NewRoot(in.FS, r.opts.Limits)
	work, err := newWorkDir(r.opts.TempDir)
	if err != nil {
		return nil, err
	}
	defer work.remove()
	if err := work.copyFrom(ctx, root, in.Path); err != nil {
		return nil, err
	}
	env, err := environment(p, in, work)
	if err != nil {
		return nil, err
	}
	out, err := run(ctx, p, work.app, env)
	if err != nil {
		return nil, err
	}
	return resource.Decode("plugin "+in.Plugin.Name, out, r.opts.Limits.Decode)
}
