// Package sopsexe builds gitops-sops (the sops module's program) for the
// tests of hosts that decrypt through it (render/execdecrypt), and holds a
// SOPS fixture with the test-only age key that opens it.
package sopsexe

import (
	"context"
	_ "embed" // the fixtures
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

var (
	// AgeKeys is an age identity file (keys.txt format) made for these
	// tests only; it opens SecretYAML and nothing else.
	//
	//go:embed testdata/keys.txt
	AgeKeys string
	// SecretYAML is a Secret "db" whose stringData.password,
	// "s3cret-plain", is encrypted by SOPS for AgeKeys' recipient.
	//
	//go:embed testdata/secret.enc.yaml
	SecretYAML string
)

// Plaintext is SecretYAML's decrypted password.
const Plaintext = "s3cret-plain"

// Build builds gitops-sops from the sops module of this repository into a
// folder of the test and returns its path. The Go build cache makes a
// second build quick.
func Build(t testing.TB) string {
	t.Helper()
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("sopsexe: cannot locate the repository")
	}
	module := filepath.Join(filepath.Dir(self), "..", "..", "sops")
	out := filepath.Join(t.TempDir(), "gitops-sops")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// -race, as make sops-check compiles the sops module: on a cold build
	// cache its SDKs are compiled once, here or there, not once each.
	cmd := exec.CommandContext(ctx, "go", "build", "-race", "-o", out, "./cmd/gitops-sops")
	cmd.Dir = module
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sopsexe: build gitops-sops: %v\n%s", err, msg)
	}
	return out
}

// WriteAgeKeys writes AgeKeys to a file of the test and returns its path.
func WriteAgeKeys(t testing.TB) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "keys.txt")
	if err := os.WriteFile(p, []byte(AgeKeys), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
