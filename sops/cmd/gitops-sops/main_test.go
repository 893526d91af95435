package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/sops"
	"github.com/kubegitops/gitops/sops/internal/sopstest"
)

// The program decrypts with a key from a file or from a named environment
// variable, says "not encrypted" with status 3, and fails without a key
// with one line naming no secret.
func TestProgram(t *testing.T) {
	identity, recipient := sopstest.NewIdentity(t)
	plain := "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: PLAIN-pw\n"
	enc := sopstest.Encrypt(t, "secret.enc.yaml", plain, sopstest.KubernetesRegex, recipient)
	keyFile := filepath.Join(t.TempDir(), "keys.txt")
	if err := os.WriteFile(keyFile, []byte(identity+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(name string) string {
		if name == "AGE_KEYS" {
			return identity
		}
		return ""
	}
	call := func(stdin string, args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(stdin), &out, &errOut, env)
		return code, out.String(), errOut.String()
	}
	for _, keys := range [][]string{{"-age-key-file", keyFile}, {"-age-key-env", "AGE_KEYS"}} {
		code, out, stderr := call(enc, append(keys, "decrypt", "app/secret.enc.yaml")...)
		if code != 0 || !strings.Contains(out, "PLAIN-pw") || strings.Contains(out, "sops:") {
			t.Errorf("%v: status %d, out %q, stderr %q", keys, code, out, stderr)
		}
		if code, out, _ := call(plain, append(keys, "decrypt", "app/plain.yaml")...); code != exitNotEncrypted || out != "" {
			t.Errorf("%v: plain file: status %d, out %q", keys, code, out)
		}
	}
	code, out, _ := call("", "-age-key-file", keyFile, "id")
	d, err := sops.New(sops.Options{AgeKeys: []string{identity}})
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || strings.TrimSpace(out) != d.ID() {
		t.Errorf("id: status %d, %q, want %q", code, out, d.ID())
	}
	code, out, stderr := call(enc, "decrypt", "app/secret.enc.yaml")
	if code != exitFailed || out != "" || !strings.Contains(stderr, sops.ErrNoKeys.Error()) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("no key: status %d, out %q, stderr %q", code, out, stderr)
	}
	if code, _, stderr := call("", "-age-key-env", "MISSING", "id"); code != exitFailed || !strings.Contains(stderr, "MISSING") {
		t.Errorf("empty key variable: status %d, stderr %q", code, stderr)
	}
	if code, _, _ := call("", "frobnicate"); code != exitUsage {
		t.Errorf("unknown command: status %d", code)
	}
}
