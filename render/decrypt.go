package render

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ErrDecrypt is wrapped by every *DecryptError.
var ErrDecrypt = errors.New("decrypt failed")

// Decryptor decrypts encrypted files (SOPS documents, for example) before a
// tool reads them. Decrypting puts one under any Renderer.
//
// Implementations are safe for concurrent use. They never put plaintext or
// key material in errors.
type Decryptor interface {
	// ID names the decryptor in the render cache key: a stable string that
	// changes whenever the decryptor's output for a file could change (its
	// version, its policy, the public identity of its keys), and never
	// holds a key, a key's secret half, or plaintext.
	ID() string
	// Decrypt returns the plaintext of the file name (slash-separated,
	// relative to the tree) whose content is data, and true; or nil and
	// false when data is not encrypted in a format the decryptor knows.
	// It is called for every file a render reads, so it must answer
	// "not encrypted" cheaply. A failure (a tampered file, no key that
	// opens it) is an error; Decrypting wraps it in a *DecryptError.
	Decrypt(ctx context.Context, name string, data []byte) (plain []byte, encrypted bool, err error)
}

// DecryptError is a file that could not be decrypted. It names the file and
// wraps ErrDecrypt and the decryptor's cause (so errors.Is finds both).
type DecryptError struct {
	// Path is the file, slash-separated and relative to the tree.
	Path string
	// Err is the decryptor's error.
	Err error
}

// Error implements error.
func (e *DecryptError) Error() string { return fmt.Sprintf("decrypt %s: %v", e.Path, e.Err) }

// Unwrap returns ErrDecrypt and the cause.
func (e *DecryptError) Unwrap() []error { return []error{ErrDecrypt, e.Err} }

// HelmSecretsPrefix marks a Helm value file that must be decrypted, as the
// helm-secrets plugin's "secrets://values.enc.yaml" does.
const HelmSecretsPrefix = "secrets://"

// DecryptingRenderer renders through next with every file decrypted on
// read. See Decrypting.
type DecryptingRenderer struct {
	next Renderer
	d    Decryptor
}

// Decrypting returns a renderer that gives next a view of the input tree in
// which every file d recognises as encrypted reads as its plaintext: plain
// manifests, Kustomize resources and secretGenerator sources, Helm value
// files, Jsonnet imports, whatever the tool reads. Helm value files named
// with the "secrets://" prefix (helm-secrets' convention) are read without
// the prefix and must be encrypted: a plain one fails with a *DecryptError.
//
// A file that fails to decrypt fails the render with a *DecryptError
// naming it, whatever the tool made of the read error. Stat of an
// encrypted file reports the size of the ciphertext.
//
// Under Cached, d.ID() enters the cache key (next's Identity is kept, with
// the decryptor's ID beside its options), and the output of a render that
// decrypted anything is kept in the process only (CacheOptions.Private),
// never in the shared store: Redis never holds plaintext. The dependency
// lists stored beside outputs hold paths only.
func Decrypting(next Renderer, d Decryptor) *DecryptingRenderer {
	return &DecryptingRenderer{next: next, d: d}
}

// Identity implements Identifier: next's identity with the decryptor's ID.
// A next that is not an Identifier yields ErrNotCacheable.
func (r *DecryptingRenderer) Identity(in Input) (Identity, error) {
	id, ok := r.next.(Identifier)
	if !ok {
		return Identity{}, fmt.Errorf("%w: %T", ErrNotCacheable, r.next)
	}
	inner, _, err := r.prepare(in)
	if err != nil {
		return Identity{}, err
	}
	ident, err := id.Identity(inner)
	if err != nil {
		return Identity{}, err
	}
	ident.Options = struct {
		Options   any
		Decryptor string
	}{ident.Options, r.d.ID()}
	return ident, nil
}

// Render implements Renderer.
func (r *DecryptingRenderer) Render(ctx context.Context, in Input) ([]*unstructured.Unstructured, error) {
	inner, must, err := r.prepare(in)
	if err != nil {
		return nil, Wrap(in.Tool, in, err)
	}
	dfs := &decryptFS{fsys: in.FS, d: r.d, ctx: ctx, must: must}
	inner.FS = dfs
	objs, err := r.next.Render(ctx, inner)
	if derr := dfs.failure(); derr != nil {
		// The tool may have wrapped, reworded or swallowed the read
		// error: the decryption failure is the cause to report.
		return nil, Wrap(in.Tool, in, derr)
	}
	if dfs.decrypted.Load() {
		markSensitive(ctx)
	}
	return objs, err
}

// prepare strips the helm-secrets prefix from value files and returns the
// tree paths that must be encrypted.
func (r *DecryptingRenderer) prepare(in Input) (Input, map[string]bool, error) {
	if in.Helm == nil {
		return in, nil, nil
	}
	var must map[string]bool
	h := *in.Helm
	h.ValueFiles = append([]string(nil), in.Helm.ValueFiles...)
	for i, vf := range h.ValueFiles {
		rest, ok := strings.CutPrefix(vf, HelmSecretsPrefix)
		if !ok {
			continue
		}
		if rest == "" || URLScheme(rest) != "" {
			return in, nil, fmt.Errorf("%w: helm value file %q: %s takes a path in the repository", ErrInvalidInput, vf, HelmSecretsPrefix)
		}
		h.ValueFiles[i] = rest
		if must == nil {
			must = map[string]bool{}
		}
		must[path.Join(cleanAppPath(in.Path), rest)] = true
	}
	in.Helm = &h
	return in, must, nil
}

// sensitiveKey carries a render's *atomic.Bool that Decrypting sets when
// the output holds plaintext.
type sensitiveKey struct{}

func withSensitiveFlag(ctx context.Context) (context.Context, *atomic.Bool) {
	flag := &atomic.Bool{}
	return context.WithValue(ctx, sensitiveKey{}, flag), flag
}

func markSensitive(ctx context.Context) {
	if flag, ok := ctx.Value(sensitiveKey{}).(*atomic.Bool); ok {
		flag.Store(true)
	}
}
