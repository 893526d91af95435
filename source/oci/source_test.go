package oci_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/internal/chartserver"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/oci"
)

const (
	user     = "robot"
	password = "s3cret-registry-password"
)

var overlay = map[string]string{
	"base/kustomization.yaml":          "resources: [cm.yaml]\n",
	"base/cm.yaml":                     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  v: base\n",
	"overlays/prod/kustomization.yaml": "resources: [../../base]\nnamePrefix: prod-\n",
}

// An artifact is resolved by tag, by constraint and by digest to its
// manifest digest, over TLS (the registry's CA from the credentials) and
// over plain HTTP (insecureOCIForceHttp), with basic auth; its files are
// read at their paths; a digest is downloaded once.
func TestResolveAndSnapshot(t *testing.T) {
	for _, tlsOn := range []bool{true, false} {
		reg := chartserver.NewArtifactRegistry(t, chartserver.ArtifactOptions{Username: user, Password: password, TLS: tlsOn})
		d100 := reg.Push("org/app", "1.0.0", overlay)
		d110 := reg.Push("org/app", "1.1.0", map[string]string{"a.yaml": "kind: A\n"})
		reg.Push("org/app", "latest", map[string]string{"b.yaml": "kind: B\n"})
		creds := &source.Credentials{Username: user, Password: password}
		if tlsOn {
			creds.CAData = reg.CAData
		} else {
			creds.InsecureOCIForceHTTP = true
		}
		repo := source.Repository{URL: reg.URL("org/app"), Credentials: creds}
		s := oci.New(oci.DefaultOptions())
		ctx := context.Background()
		for rev, want := range map[string]string{"1.0.0": d100, "~1.0": d100, ">=1.0 <2": d110, "1.x": d110, d100: d100} {
			got, err := s.Resolve(ctx, repo, rev)
			if err != nil {
				t.Fatalf("tls=%v resolve %q: %v", tlsOn, rev, err)
			}
			if got.Commit != want {
				t.Errorf("tls=%v resolve %q = %s, want %s", tlsOn, rev, got.Commit, want)
			}
		}
		for range 3 {
			snap, err := s.Snapshot(ctx, repo, source.Revision{Commit: d100})
			if err != nil {
				t.Fatal(err)
			}
			data, err := fs.ReadFile(snap, "overlays/prod/kustomization.yaml")
			if err != nil || !strings.Contains(string(data), "namePrefix") {
				t.Fatalf("overlay: %q %v", data, err)
			}
			if snap.Revision().Commit != d100 {
				t.Errorf("snapshot revision %s", snap.Revision())
			}
		}
		if n := s.Stats().Downloads; n != 1 {
			t.Errorf("tls=%v downloads = %d, want 1 (a digest is read once)", tlsOn, n)
		}
		_, err := s.Resolve(ctx, repo, "9.x")
		if !errors.Is(err, source.ErrRevisionNotFound) {
			t.Errorf("9.x: %v", err)
		}
		_, err = s.Resolve(ctx, repo, "no-such-tag")
		if !errors.Is(err, source.ErrRevisionNotFound) {
			t.Errorf("no-such-tag: %v", err)
		}
		wrong := *creds
		wrong.Password = "nope-" + password
		_, err = s.Resolve(ctx, source.Repository{URL: repo.URL, Credentials: &wrong}, "1.0.0")
		if !errors.Is(err, source.ErrAuthentication) || strings.Contains(err.Error(), password) {
			t.Errorf("tls=%v wrong password: %v", tlsOn, err)
		}
	}
}

// A registry that speaks plain HTTP is refused unless the repository's
// credentials set insecureOCIForceHttp; a TLS registry whose CA is not
// trusted is refused too.
func TestPlainHTTPAndUntrustedTLSAreRefused(t *testing.T) {
	ctx := context.Background()
	s := oci.New(oci.DefaultOptions())
	plain := chartserver.NewArtifactRegistry(t, chartserver.ArtifactOptions{})
	plain.Push("app", "1.0.0", overlay)
	_, err := s.Resolve(ctx, source.Repository{URL: plain.URL("app")}, "1.0.0")
	if !errors.Is(err, oci.ErrPlainHTTPRegistry) {
		t.Errorf("plain HTTP without insecureOCIForceHttp: %v", err)
	}
	secure := chartserver.NewArtifactRegistry(t, chartserver.ArtifactOptions{TLS: true})
	secure.Push("app", "1.0.0", overlay)
	_, err = s.Resolve(ctx, source.Repository{URL: secure.URL("app")}, "1.0.0")
	if !errors.Is(err, source.ErrUnavailable) || errors.Is(err, oci.ErrPlainHTTPRegistry) {
		t.Errorf("untrusted TLS: %v", err)
	}
}

// Artifacts past the limits, or holding unsafe entries, are refused with
// an *ArtifactError naming the artifact and its digest; nothing is cached.
func TestLimitsRefuseByName(t *testing.T) {
	ctx := context.Background()
	reg := chartserver.NewArtifactRegistry(t, chartserver.ArtifactOptions{})
	opts := oci.DefaultOptions()
	opts.PlainHTTP = true
	opts.Limits = oci.Limits{MaxTotalBytes: 1000, MaxFileBytes: 600, MaxFiles: 5}
	s := oci.New(opts)
	repo := source.Repository{URL: reg.URL("org/big")}
	cases := map[string]struct {
		files map[string]string
		want  error
	}{
		"total":  {map[string]string{"a.yaml": strings.Repeat("a", 500), "b.yaml": strings.Repeat("b", 501)}, oci.ErrArtifactTooLarge},
		"file":   {map[string]string{"a.yaml": strings.Repeat("a", 601)}, oci.ErrArtifactTooLarge},
		"count":  {map[string]string{"1": "", "2": "", "3": "", "4": "", "5": "", "6": ""}, oci.ErrArtifactTooLarge},
		"escape": {map[string]string{"../evil.yaml": "x"}, oci.ErrUnsafeArtifact},
	}
	for tag, c := range cases {
		d := reg.Push("org/big", tag, c.files)
		_, err := s.Snapshot(ctx, repo, source.Revision{Commit: d})
		var ae *oci.ArtifactError
		if !errors.Is(err, c.want) || !errors.As(err, &ae) || ae.Digest != d || ae.Artifact != reg.Host+"/org/big" {
			t.Errorf("%s: %v", tag, err)
		}
		if err != nil && !strings.Contains(err.Error(), reg.Host+"/org/big@"+d) {
			t.Errorf("%s: the error does not name the artifact: %v", tag, err)
		}
	}
	d := reg.PushLayer("org/big", "zip", "application/zip", []byte("PK"))
	_, err := s.Snapshot(ctx, repo, source.Revision{Commit: d})
	if !errors.Is(err, oci.ErrNotAnArtifact) {
		t.Errorf("no content layer: %v", err)
	}
	d = reg.PushLayer("org/big", "other", "application/vnd.example.layer.v1.tar+gzip", chartserver.TarGz(t, map[string]string{"a.yaml": "x"}))
	_, err = s.Snapshot(ctx, repo, source.Revision{Commit: d})
	if !errors.Is(err, oci.ErrNotAnArtifact) || !strings.Contains(err.Error(), "application/vnd.example.layer.v1.tar+gzip") {
		t.Errorf("layer media type not allowed: %v", err)
	}
}

// Calls through one Source with the same credentials share their
// connections: ten resolves and snapshots of new tags dial the registry
// once or twice, not once or more per call (a transport per call did).
// With insecureOCIForceHttp no HTTPS attempt reaches the registry either.
func TestCallsShareConnections(t *testing.T) {
	for _, tlsOn := range []bool{true, false} {
		reg := chartserver.NewArtifactRegistry(t, chartserver.ArtifactOptions{Username: user, Password: password, TLS: tlsOn})
		creds := &source.Credentials{Username: user, Password: password}
		if tlsOn {
			creds.CAData = reg.CAData
		} else {
			creds.InsecureOCIForceHTTP = true
		}
		repo := source.Repository{URL: reg.URL("org/app"), Credentials: creds}
		s := oci.New(oci.DefaultOptions())
		ctx := context.Background()
		for i := range 10 {
			tag := fmt.Sprintf("1.0.%d", i)
			reg.Push("org/app", tag, map[string]string{"a.yaml": "kind: A\nmetadata: {name: " + tag + "}\n"})
		}
		before := reg.Conns() // the pushes' own
		for i := range 10 {
			rev, err := s.Resolve(ctx, repo, fmt.Sprintf("1.0.%d", i))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Snapshot(ctx, repo, rev); err != nil {
				t.Fatal(err)
			}
		}
		if n := reg.Conns() - before; n > 2 {
			t.Errorf("tls=%v: 10 resolves and snapshots opened %d connections, want at most 2", tlsOn, n)
		}
	}
}
