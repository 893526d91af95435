package source

import (
	"context"
	"time"
)

// SignatureSource is a Source that can list the GnuPG signatures of a
// revision, what Argo CD's source integrity verifies (source/git
// implements it; package source/integrity decides what they mean for an
// app).
type SignatureSource interface {
	// Signatures lists the signed objects of rev that req asks for, each
	// checked by req.Verifier, newest first. Errors are *Error naming the
	// repository and revision.
	Signatures(ctx context.Context, repo Repository, rev Revision, req SignatureRequest) ([]Signature, error)
}

// SealTrailer is the trailer that makes a commit a seal commit: a
// correctly signed commit whose message has a line starting with it
// (letter case aside) vouches for its ancestors, which a deep listing does
// not go past.
const SealTrailer = "Argocd-gpg-seal:"

// SignatureRequest says which signatures Signatures lists, and checks
// them.
type SignatureRequest struct {
	// Deep lists the annotated tag, when rev.Ref names one, then the
	// commit and all its ancestors not reachable from a seal commit (a
	// commit with SealTrailer whose signature Verifier finds good), and
	// the boundary commits (seals among them) whose children are listed:
	// `git rev-list --boundary <commit> --not <seals>`. When the commit is
	// a good seal itself, only it is listed. Without Deep, only the
	// annotated tag when rev.Ref names one, else the commit.
	Deep bool
	// Verifier checks each signature. Required.
	Verifier SignatureVerifier
}

// SignatureVerifier checks one detached, ASCII-armored signature of a Git
// object.
type SignatureVerifier interface {
	// VerifySignature checks signature over signed, the object as Git
	// encodes it without its signature.
	VerifySignature(signed []byte, signature string) SignatureCheck
}

// SignatureCheck is the verdict on one signature.
type SignatureCheck struct {
	// Result is the verdict.
	Result SignatureResult
	// KeyID is the ID of the key that made the signature, 16 upper-case
	// hexadecimal digits (a subkey's own ID when a subkey signed); "" when
	// unsigned or when the signature names no key.
	KeyID string
}

// SignatureResult is the verdict on a signature, in Argo CD's words.
type SignatureResult string

// The verdicts on a signature.
const (
	// SignatureGood: a valid signature by a key of the keyring.
	SignatureGood SignatureResult = "signed"
	// SignatureBad: the signature does not verify (the object or the
	// signature was altered, or it is not a signature).
	SignatureBad SignatureResult = "bad signature"
	// SignatureExpired: a valid signature past its expiry.
	SignatureExpired SignatureResult = "expired signature"
	// SignatureExpiredKey: a valid signature by a key that has expired.
	SignatureExpiredKey SignatureResult = "signed with expired key"
	// SignatureRevokedKey: a valid signature by a revoked key.
	SignatureRevokedKey SignatureResult = "signed with revoked key"
	// SignatureMissingKey: signed by a key the keyring does not hold.
	SignatureMissingKey SignatureResult = "signed with key not in keyring"
	// SignatureUnsigned: no signature at all.
	SignatureUnsigned SignatureResult = "unsigned"
)

// Signature is one signed object of a revision: an annotated tag or a
// commit.
type Signature struct {
	// Revision is the tag's name for a tag ("v1.2.0"), else the commit id.
	Revision string
	// Tag says the object is an annotated tag.
	Tag bool
	// Result and KeyID are the Verifier's check.
	Result SignatureResult
	KeyID  string
	// Date is when the commit was authored, or the tag made.
	Date time.Time
	// Name and Email are the commit's author, or the tagger.
	Name, Email string
}
