// Package sopsexe installs gitops-sops (the sops module's program) for the
// tests of hosts that decrypt through it (render/execdecrypt), and holds a
// SOPS fixture with the test-only age key that opens it.
package sopsexe

import (
	"context"
	_ "embed" // the fixtures
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/kubegitops/gitops/internal/toolbuild"
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

// program is gitops-sops of the sops module of this repository, with
// -race, as make sops-check compiles the sops module: on a cold build
// cache its SDKs are compiled once, here or there, not once each.
func program() (toolbuild.Local, error) {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return toolbuild.Local{}, errors.New("sopsexe: cannot locate the repository")
	}
	return toolbuild.Local{Dir: filepath.Join(filepath.Dir(self), "..", "..", "sops"), Package: "./cmd/gitops-sops", Flags: []string{"-race"}}, nil
}

// Install installs gitops-sops into the user cache (again only when its
// source changed) and returns its path: make tools runs it before the
// tests (internal/testtools).
func Install(ctx context.Context, log func(format string, args ...any)) (string, error) {
	p, err := program()
	if err != nil {
		return "", err
	}
	if log != nil {
		log("installing gitops-sops (-race) from %s", p.Dir)
	}
	return p.Install(ctx, toolbuild.Options{})
}

// Binary returns gitops-sops for a test: make tools installed it, so the
// test finds it; outside make, or after a change of its source, it is
// installed here with no deadline (a build takes the machine's time, not
// the test's).
func Binary(t testing.TB) string {
	t.Helper()
	bin, err := Install(context.Background(), nil)
	if err != nil {
		t.Fatalf("sopsexe: %v\n(run `make tools` to build the programs the tests run)", err)
	}
	return bin
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
