package sops

import (
	"strings"
	"testing"

	"filippo.io/age"
	gsops "github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/cmd/sops/common"
	"github.com/getsops/sops/v3/cmd/sops/formats"
	"github.com/getsops/sops/v3/config"
)

// newIdentity returns a fresh age key pair: the identity string (the
// secret) and the recipient (the public key).
func newIdentity(t testing.TB) (string, string) {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	return id.String(), id.Recipient().String()
}

// encryptFile encrypts plain as the sops CLI would for a file called name,
// for the age recipients, with the Kubernetes convention of encrypting
// only data and stringData when regex is set.
func encryptFile(t testing.TB, name, plain, regex string, recipients ...string) string {
	t.Helper()
	store := common.StoreForFormat(formats.FormatForPath(name), config.NewStoresConfig())
	branches, err := store.LoadPlainFile([]byte(plain))
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	var group gsops.KeyGroup
	for _, r := range recipients {
		mk, err := sopsage.MasterKeyFromRecipient(r)
		if err != nil {
			t.Fatal(err)
		}
		group = append(group, mk)
	}
	md := gsops.Metadata{KeyGroups: []gsops.KeyGroup{group}, Version: "3.13.3"}
	if regex != "" {
		md.EncryptedRegex = regex
	} else {
		md.UnencryptedSuffix = gsops.DefaultUnencryptedSuffix
	}
	tree := gsops.Tree{Branches: branches, Metadata: md}
	dataKey, errs := tree.GenerateDataKey()
	if len(errs) > 0 {
		t.Fatalf("data key: %v", errs)
	}
	if err := common.EncryptTree(common.EncryptTreeOpts{Tree: &tree, Cipher: aes.NewCipher(), DataKey: dataKey}); err != nil {
		t.Fatal(err)
	}
	out, err := store.EmitEncryptedFile(tree)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
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
