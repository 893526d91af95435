package integrity

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/kubegitops/gitops/source"
)

// ConfigMapName is the ConfigMap Argo CD keeps its GnuPG public keys in,
// in its namespace: each key ID maps to the ASCII-armored public key.
const ConfigMapName = "argocd-gpg-keys-cm"

// KeyError reports one entry of a key ConfigMap that is left out of the
// key ring; it names the entry, never a key's content.
type KeyError struct {
	// KeyID is the entry's name.
	KeyID string
	// Err says what is wrong.
	Err error
}

// Error implements error.
func (e *KeyError) Error() string { return fmt.Sprintf("GnuPG key %s: %v", e.KeyID, e.Err) }

// Unwrap returns the cause.
func (e *KeyError) Unwrap() error { return e.Err }

// KeyRing holds the public keys signatures are verified against. It is
// immutable and safe for concurrent use; the zero value and nil hold no
// key.
type KeyRing struct {
	entities openpgp.EntityList
	ids      []string
	digest   string
}

// ParseKeyRing reads keys as argocd-gpg-keys-cm holds them: each entry's
// name is a key ID (16 hexadecimal digits) and its value the
// ASCII-armored public key with that ID, as `argocd gpg add` writes it.
// An entry that is not (another name, a value that is not one armored
// public key, a key whose ID is not the name) is left out and reported as
// a *KeyError in the error (errors.Join, sorted by name); the other keys
// are in the returned key ring, which is never nil.
func ParseKeyRing(data map[string]string) (*KeyRing, error) {
	names := make([]string, 0, len(data))
	for name := range data {
		names = append(names, name)
	}
	sort.Strings(names)
	k := &KeyRing{}
	h := sha256.New()
	var errs []error
	for _, name := range names {
		e, err := parseKey(name, data[name])
		if err != nil {
			errs = append(errs, &KeyError{KeyID: name, Err: err})
			continue
		}
		k.entities = append(k.entities, e)
		k.ids = append(k.ids, KeyIDOf(e.PrimaryKey.KeyId))
		fmt.Fprintf(h, "%s\n%d\n%s\n", name, len(data[name]), data[name])
	}
	k.digest = hex.EncodeToString(h.Sum(nil))
	return k, errors.Join(errs...)
}

// parseKey reads one entry: one armored public key whose primary key ID
// is name.
func parseKey(name, armored string) (*openpgp.Entity, error) {
	if !isShortKeyID(name) {
		return nil, errors.New("the name is not a key ID (16 hexadecimal digits)")
	}
	el, err := openpgp.ReadArmoredKeyRing(strings.NewReader(armored))
	if err != nil {
		return nil, fmt.Errorf("not an ASCII-armored public key: %w", err)
	}
	if len(el) != 1 {
		return nil, fmt.Errorf("holds %d keys, want one", len(el))
	}
	if id := KeyIDOf(el[0].PrimaryKey.KeyId); !strings.EqualFold(id, name) {
		return nil, fmt.Errorf("holds key %s, not the key the name gives", id)
	}
	return el[0], nil
}

// KeyIDs are the primary key IDs of the ring, sorted.
func (k *KeyRing) KeyIDs() []string {
	if k == nil {
		return nil
	}
	return append([]string(nil), k.ids...)
}

// Digest is a content address of the ring: equal for equal keys.
func (k *KeyRing) Digest() string {
	if k == nil {
		return ""
	}
	return k.digest
}

// KeyIDOf writes a key ID as Argo CD and gpg do: 16 upper-case
// hexadecimal digits.
func KeyIDOf(id uint64) string { return fmt.Sprintf("%016X", id) }

// PrimaryKeyID returns the ID of the primary key of the ring's key (or
// subkey) keyID, and whether the ring holds it.
func (k *KeyRing) PrimaryKeyID(keyID string) (string, bool) {
	if k == nil {
		return "", false
	}
	id, ok := parseKeyID(keyID)
	if !ok {
		return "", false
	}
	keys := k.entities.KeysById(id)
	if len(keys) == 0 {
		return "", false
	}
	return KeyIDOf(keys[0].Entity.PrimaryKey.KeyId), true
}

// VerifySignature implements source.SignatureVerifier: it checks one
// armored detached signature over signed against the ring, at the current
// time. More than one signature block, a block that is not a signature, or
// a signature that names no issuer is bad, as go-git's Commit.Verify
// refuses them.
func (k *KeyRing) VerifySignature(signed []byte, signature string) source.SignatureCheck {
	bad := source.SignatureCheck{Result: source.SignatureBad}
	if strings.Count(signature, "-----BEGIN PGP SIGNATURE-----") != 1 {
		return bad
	}
	block, err := armor.Decode(strings.NewReader(signature))
	if err != nil || block.Type != openpgp.SignatureType {
		return bad
	}
	body, err := io.ReadAll(block.Body)
	if err != nil {
		return bad
	}
	p, err := packet.Read(bytes.NewReader(body))
	if err != nil {
		return bad
	}
	sig, ok := p.(*packet.Signature)
	if !ok {
		return bad
	}
	issuer, ok := issuerOf(sig)
	if !ok {
		return bad
	}
	check := source.SignatureCheck{KeyID: KeyIDOf(issuer)}
	var ring openpgp.EntityList
	if k != nil {
		ring = k.entities
	}
	_, _, err = openpgp.VerifyDetachedSignature(ring, bytes.NewReader(signed), bytes.NewReader(body), nil)
	switch {
	case err == nil:
		check.Result = source.SignatureGood
	case errors.Is(err, pgperrors.ErrUnknownIssuer):
		check.Result = source.SignatureMissingKey
	case errors.Is(err, pgperrors.ErrKeyRevoked):
		check.Result = source.SignatureRevokedKey
	case errors.Is(err, pgperrors.ErrKeyExpired):
		check.Result = source.SignatureExpiredKey
	case errors.Is(err, pgperrors.ErrSignatureExpired):
		check.Result = source.SignatureExpired
	default:
		check.Result = source.SignatureBad
	}
	return check
}

// issuerOf is the ID of the key that made sig: its issuer key ID, or the
// low 64 bits of its issuer fingerprint.
func issuerOf(sig *packet.Signature) (uint64, bool) {
	if sig.IssuerKeyId != nil {
		return *sig.IssuerKeyId, true
	}
	if n := len(sig.IssuerFingerprint); n >= 8 {
		var id uint64
		for _, b := range sig.IssuerFingerprint[n-8:] {
			id = id<<8 | uint64(b)
		}
		return id, true
	}
	return 0, false
}

// NormalizeKeyID returns a key ID as a policy may write it (16
// hexadecimal digits, or the 40 of a fingerprint, whose last 16 are the
// ID) as KeyIDOf writes it, and whether it is one.
func NormalizeKeyID(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if len(s) == 40 && isHex(s) {
		s = s[24:]
	}
	if !isShortKeyID(s) {
		return "", false
	}
	return strings.ToUpper(s), true
}

func parseKeyID(s string) (uint64, bool) {
	n, ok := NormalizeKeyID(s)
	if !ok {
		return 0, false
	}
	b, _ := hex.DecodeString(n)
	var id uint64
	for _, x := range b {
		id = id<<8 | uint64(x)
	}
	return id, true
}

func isShortKeyID(s string) bool { return len(s) == 16 && isHex(s) }

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}
