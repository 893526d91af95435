package sops

import (
	"strings"
	"testing"

	"github.com/kubegitops/gitops/sops/internal/sopstest"
)

func newIdentity(t testing.TB) (string, string) { return sopstest.NewIdentity(t) }

func encryptFile(t testing.TB, name, plain, regex string, recipients ...string) string {
	return sopstest.Encrypt(t, name, plain, regex, recipients...)
}

// newDecryptor returns a Decryptor holding the identities.
func newDecryptor(t testing.TB, identities ...string) *Decryptor {
	t.Helper()
	opts := DefaultOptions()
	opts.AgeKeys = identities
	d, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

const secretYAML = `apiVersion: v1
kind: Secret
metadata:
  name: db
type: Opaque
stringData:
  password: hunter2-plaintext
`

func mustContain(t testing.TB, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Fatalf("%s: %q not in:\n%s", what, sub, s)
		}
	}
}
