// Package sopstest encrypts fixtures for tests as the sops CLI would, with
// age keys generated in the test.
package sopstest

import (
	"testing"

	"filippo.io/age"
	gsops "github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/cmd/sops/common"
	"github.com/getsops/sops/v3/cmd/sops/formats"
	"github.com/getsops/sops/v3/config"
)

// KubernetesRegex encrypts only a Secret's data and stringData, as
// repositories usually configure SOPS for Kubernetes manifests.
const KubernetesRegex = "^(data|stringData)$"

// NewIdentity returns a fresh age key pair: the identity string (the
// secret) and the recipient (the public key).
func NewIdentity(t testing.TB) (identity, recipient string) {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	return id.String(), id.Recipient().String()
}

// Encrypt encrypts plain as the sops CLI would for a file called name (the
// extension picks the format) for the age recipients. With regex set only
// matching keys are encrypted, else every value.
func Encrypt(t testing.TB, name, plain, regex string, recipients ...string) string {
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
