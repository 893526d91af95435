package oci_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/kubegitops/gitops/internal/chartserver"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/oci"
)

// BenchmarkPull reads an artifact of 200 manifests (about 400 KB) from an
// in-process registry over HTTP: ours cold (a new Source: resolve the tag,
// download, extract), ours warm (the same Source again: the tag resolved,
// the digest's files from memory), and the baseline, what `oras pull`
// does with oras-go (copy the artifact into a store, then extract its
// layer), measured in the same run. BENCHMARKS.md has the figures.
func BenchmarkPull(b *testing.B) {
	reg := chartserver.NewArtifactRegistry(b, chartserver.ArtifactOptions{})
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("manifests/cm-%03d.yaml", i)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%03d\ndata:\n  v: %q\n", i, strings.Repeat("x", 1900))
	}
	reg.Push("org/app", "1.0.0", files)
	repo := source.Repository{URL: reg.URL("org/app"), Credentials: &source.Credentials{InsecureOCIForceHTTP: true}}
	ctx := context.Background()
	pull := func(b *testing.B, s *oci.Source) {
		rev, err := s.Resolve(ctx, repo, "1.0.0")
		if err != nil {
			b.Fatal(err)
		}
		snap, err := s.Snapshot(ctx, repo, rev)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := fs.ReadFile(snap, "manifests/cm-199.yaml"); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("ours-cold", func(b *testing.B) {
		for b.Loop() {
			pull(b, oci.New(oci.DefaultOptions()))
		}
	})
	b.Run("ours-warm", func(b *testing.B) {
		s := oci.New(oci.DefaultOptions())
		pull(b, s)
		for b.Loop() {
			pull(b, s)
		}
	})
	b.Run("oras-pull", func(b *testing.B) {
		for b.Loop() {
			if n := orasPull(b, reg.Host+"/org/app", "1.0.0"); n != len(files) {
				b.Fatalf("oras pull extracted %d files, want %d", n, len(files))
			}
		}
	})
}

// orasPull copies ref's artifact into a memory store with oras-go, as
// `oras pull` does, and extracts its layers; it returns the files read.
func orasPull(b *testing.B, ref, tag string) int {
	ctx := context.Background()
	repo, err := remote.NewRepository(ref)
	if err != nil {
		b.Fatal(err)
	}
	repo.PlainHTTP = true
	store := memory.New()
	desc, err := oras.Copy(ctx, repo, tag, store, tag, oras.DefaultCopyOptions)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := content.FetchAll(ctx, store, desc)
	if err != nil {
		b.Fatal(err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, l := range m.Layers {
		data, err := content.FetchAll(ctx, store, l)
		if err != nil {
			b.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		tr := tar.NewReader(zr)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadAll(tr); err != nil {
				b.Fatal(err)
			}
			if h.Typeflag == tar.TypeReg {
				n++
			}
		}
	}
	return n
}
