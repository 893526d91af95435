package render

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// keyFormat changes whenever the key derivation, the stored encoding or
// what a renderer accepts changes, so that old entries are never misread.
// v2: renders stored before a SOPS-encrypted file without a decryptor was
// refused (*EncryptedError) may hold its ciphertext as if it were plain.
const keyFormat = "gitops-render-v2"

// baseKey is the part of the key known before rendering: identity, input
// and the tree hash of the application path.
func (c *CachedRenderer) baseKey(in Input) (string, error) {
	id, err := c.next.(Identifier).Identity(in)
	if err != nil {
		return "", Wrap(in.Tool, in, err)
	}
	appHash, err := TreeHash(in.FS, cleanAppPath(in.Path))
	if err != nil {
		return "", Wrap(id.Tool, in, fmt.Errorf("tree hash of %s: %w", in.Path, err))
	}
	enc, err := json.Marshal(struct {
		Format   string
		Tool     Kind
		Version  string
		Options  any
		Input    Input
		TreeHash string
	}{keyFormat, id.Tool, id.Version, id.Options, in, appHash})
	if err != nil {
		return "", Wrap(id.Tool, in, fmt.Errorf("encode cache key: %w", err))
	}
	sum := sha256.Sum256(enc)
	return hex.EncodeToString(sum[:]), nil
}

// fullKey extends base with the digests of the dependencies as fsys has
// them now.
func fullKey(fsys fs.FS, base string, deps []dependency) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", base)
	for _, d := range deps {
		dg, err := dependencyDigest(fsys, d)
		if err != nil {
			return "", fmt.Errorf("digest of %s: %w", d.Path, err)
		}
		fmt.Fprintf(h, "%d:%s %d %s\n", len(d.Path), d.Path, d.Access, dg)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// relevantDependencies drops the accesses the application's tree hash
// already covers: anything at or under the application path.
func relevantDependencies(deps []dependency, appPath string) []dependency {
	app := cleanAppPath(appPath)
	out := deps[:0:0]
	for _, d := range deps {
		if app == "." || d.Path == app || strings.HasPrefix(d.Path, app+"/") {
			continue
		}
		out = append(out, d)
	}
	return out
}

func cleanAppPath(p string) string {
	if p == "" {
		return "."
	}
	return path.Clean(p)
}

func (c *CachedRenderer) loadDeps(ctx context.Context, base string) ([]dependency, bool) {
	data, ok := c.storeGet(ctx, c.opts.KeyPrefix+"deps/"+base)
	if !ok {
		return nil, false
	}
	var deps []dependency
	if err := json.Unmarshal(data, &deps); err != nil {
		c.opts.Logger.Error(err, "render cache: unreadable dependency list; treating as a miss")
		return nil, false
	}
	return deps, true
}

func (c *CachedRenderer) storeDeps(ctx context.Context, base string, deps []dependency) {
	data, err := json.Marshal(deps)
	if err != nil {
		return
	}
	c.storeSet(ctx, c.opts.KeyPrefix+"deps/"+base, data)
}

func (c *CachedRenderer) loadOutput(ctx context.Context, full string) ([]*unstructured.Unstructured, bool) {
	if c.decoded != nil {
		if objs, ok := c.decoded.get(full); ok {
			// Content-addressed: valid even if the store has dropped it.
			return objs, true
		}
	}
	data, ok, _ := c.opts.Private.Get(ctx, c.opts.KeyPrefix+"out/"+full)
	if !ok {
		data, ok = c.storeGet(ctx, c.opts.KeyPrefix+"out/"+full)
	}
	if !ok {
		return nil, false
	}
	objs, err := decodeObjects(data)
	if err != nil {
		c.opts.Logger.Error(err, "render cache: unreadable output; treating as a miss")
		return nil, false
	}
	c.keepDecoded(full, objs)
	return objs, true
}

// keepDecoded remembers a private copy of objs under full.
func (c *CachedRenderer) keepDecoded(full string, objs []*unstructured.Unstructured) {
	if c.decoded != nil {
		c.decoded.add(full, objs)
	}
}

func deepCopyObjects(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = o.DeepCopy()
	}
	return out
}

func encodeObjects(objs []*unstructured.Unstructured) ([]byte, error) {
	raw := make([]map[string]any, len(objs))
	for i, o := range objs {
		raw[i] = o.Object
	}
	return json.Marshal(raw)
}

// decodeObjects decodes with apimachinery's JSON, which keeps integers as
// int64 as the YAML decoder does, so a hit equals a fresh render.
func decodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	var raw []map[string]any
	if err := utiljson.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	objs := make([]*unstructured.Unstructured, len(raw))
	for i, m := range raw {
		objs[i] = &unstructured.Unstructured{Object: m}
	}
	return objs, nil
}
