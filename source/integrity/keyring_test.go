package integrity

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/source"
)

func sign(t *testing.T, e *openpgp.Entity, data []byte, cfg *packet.Config) string {
	t.Helper()
	var buf bytes.Buffer
	if err := openpgp.ArmoredDetachSign(&buf, e, bytes.NewReader(data), cfg); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestParseKeyRing reads argocd-gpg-keys-cm as Argo CD keeps it; each bad
// entry is left out and named, the others are kept.
func TestParseKeyRing(t *testing.T) {
	alice, bob := testfiles.GPGKey(t, "alice", "a@example.com"), testfiles.GPGKey(t, "bob", "b@example.com")
	aliceID, bobID := testfiles.GPGKeyID(alice), testfiles.GPGKeyID(bob)
	ring, err := ParseKeyRing(map[string]string{
		aliceID:                testfiles.GPGPublicKey(t, alice),
		strings.ToLower(bobID): testfiles.GPGPublicKey(t, bob), // letter case aside
		"not-a-key-id":         testfiles.GPGPublicKey(t, alice),
		"0123456789ABCDEF":     testfiles.GPGPublicKey(t, alice), // another key's name
		"FEDCBA9876543210":     "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nnot a key\n-----END PGP PUBLIC KEY BLOCK-----\n",
	})
	var names []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ke *KeyError
		if !errors.As(e, &ke) {
			t.Fatalf("%v is not a KeyError", e)
		}
		names = append(names, ke.KeyID)
		if strings.Contains(e.Error(), "BEGIN PGP") {
			t.Errorf("%v holds the key", e)
		}
	}
	if strings.Join(names, " ") != "0123456789ABCDEF FEDCBA9876543210 not-a-key-id" {
		t.Errorf("refused entries %v", names)
	}
	if got := ring.KeyIDs(); len(got) != 2 {
		t.Fatalf("key ring %v, want alice's and bob's", got)
	}
	again, _ := ParseKeyRing(map[string]string{aliceID: testfiles.GPGPublicKey(t, alice)})
	same, _ := ParseKeyRing(map[string]string{aliceID: testfiles.GPGPublicKey(t, alice)})
	if again.Digest() != same.Digest() || again.Digest() == ring.Digest() {
		t.Error("the digest does not follow the keys")
	}
	sub := alice.Subkeys[len(alice.Subkeys)-1].PublicKey.KeyIdString()
	if p, ok := ring.PrimaryKeyID(sub); !ok || p != aliceID {
		t.Errorf("PrimaryKeyID(%s) = %s %v, want %s", sub, p, ok, aliceID)
	}
}

// TestVerifySignature gives each verdict of a signature over a Git
// object's bytes.
func TestVerifySignature(t *testing.T) {
	alice, mallory := testfiles.GPGKey(t, "alice", "a@example.com"), testfiles.GPGKey(t, "mallory", "m@example.com")
	// carol's key was made two hours ago and expired half an hour ago.
	twoHoursAgo := &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, KeyLifetimeSecs: 90 * 60, Time: func() time.Time { return time.Now().Add(-2 * time.Hour) }}
	carol, err := openpgp.NewEntity("carol", "", "c@example.com", twoHoursAgo)
	if err != nil {
		t.Fatal(err)
	}
	// dave's key, made two hours ago, never expires.
	twoHoursAgo.KeyLifetimeSecs = 0
	dave, err := openpgp.NewEntity("dave", "", "d@example.com", twoHoursAgo)
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor a <a@example.com> 1 +0000\n\nmessage\n")
	// erin signed, then revoked her key.
	erin := testfiles.GPGKey(t, "erin", "e@example.com")
	byErin := sign(t, erin, data, nil)
	if err := erin.RevokeKey(packet.KeyCompromised, "lost", nil); err != nil {
		t.Fatal(err)
	}
	ring, err := ParseKeyRing(map[string]string{testfiles.GPGKeyID(alice): testfiles.GPGPublicKey(t, alice),
		testfiles.GPGKeyID(carol): testfiles.GPGPublicKey(t, carol), testfiles.GPGKeyID(dave): testfiles.GPGPublicKey(t, dave),
		testfiles.GPGKeyID(erin): testfiles.GPGPublicKey(t, erin)})
	if err != nil {
		t.Fatal(err)
	}
	good := sign(t, alice, data, nil)
	sub := alice.Subkeys[len(alice.Subkeys)-1].PublicKey.KeyIdString()
	anHourAgo := func() time.Time { return time.Now().Add(-time.Hour) }
	expiring := &packet.Config{SigLifetimeSecs: 60, Time: anHourAgo}
	for _, c := range []struct {
		name   string
		signed []byte
		sig    string
		want   source.SignatureResult
		key    string
	}{
		{"good", data, good, source.SignatureGood, sub},
		{"altered", append([]byte("x"), data...), good, source.SignatureBad, sub},
		{"unknown key", data, sign(t, mallory, data, nil), source.SignatureMissingKey, mallory.Subkeys[len(mallory.Subkeys)-1].PublicKey.KeyIdString()},
		{"expired", data, sign(t, dave, data, expiring), source.SignatureExpired, testfiles.GPGKeyID(dave)},
		{"expired key", data, sign(t, carol, data, &packet.Config{Time: anHourAgo}), source.SignatureExpiredKey, testfiles.GPGKeyID(carol)},
		{"revoked key", data, byErin, source.SignatureRevokedKey, erin.Subkeys[len(erin.Subkeys)-1].PublicKey.KeyIdString()},
		{"two signatures", data, good + good, source.SignatureBad, ""},
		{"not a signature", data, "-----BEGIN PGP SIGNATURE-----\n\nAAAA\n-----END PGP SIGNATURE-----\n", source.SignatureBad, ""},
	} {
		got := ring.VerifySignature(c.signed, c.sig)
		if got.Result != c.want || got.KeyID != c.key {
			t.Errorf("%s: %+v, want %s by %q", c.name, got, c.want, c.key)
		}
	}
	var empty *KeyRing
	if got := empty.VerifySignature(data, good); got.Result != source.SignatureMissingKey {
		t.Errorf("no key ring: %+v", got)
	}
}

// TestNormalizeKeyID: key IDs and fingerprints, letter case aside.
func TestNormalizeKeyID(t *testing.T) {
	for in, want := range map[string]string{
		"d56c4fca57a46444":                         "D56C4FCA57A46444",
		"5DE3E0509C47EA3CF04A42D34AEE18F83AFDEB23": "4AEE18F83AFDEB23",
		"4AEE18F8":         "",
		"not hex at all!!": "",
	} {
		if got, ok := NormalizeKeyID(in); got != want || ok != (want != "") {
			t.Errorf("NormalizeKeyID(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
}
