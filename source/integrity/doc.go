// Package integrity verifies an application's sources against its
// project's source integrity criteria, as Argo CD does before it syncs
// them (AppProject sourceIntegrity, and the older signatureKeys read
// through AppProject.EffectiveSourceIntegrity): the GnuPG signatures of
// Git commits and annotated tags, checked in process with ProtonMail's
// go-crypto against the public keys of Argo CD's argocd-gpg-keys-cm
// (KeyRing), instead of a gpg program and keyring on disk.
//
// Rules (Argo CD's util/sourceintegrity):
//
//   - A policy selects a source when the source's repository URL matches
//     one of its repos' url globs without "!" and none with "!"; a source
//     no policy selects is not verified, and Helm chart sources never are.
//     Two policies selecting one source fail it (a mistake in the project
//     must not turn verification off).
//   - Mode none verifies nothing; head verifies the annotated tag when the
//     source's revision is one, else the commit; strict verifies the tag,
//     the commit and its history back to the most recent good seal
//     commits (source.SealTrailer), seals included (source.SignatureRequest).
//   - Each signature must be good and made by a key the policy lists (by
//     the signing key's ID or, for a subkey, its primary key's; 16
//     hexadecimal digits or a 40-digit fingerprint, letter case aside).
//     Each one that is not is a problem, in Argo CD's words: "Failed
//     verifying revision <rev> by '<author>': <verdict> (key_id=<id>)",
//     where the verdict is one of source.SignatureResult's or "signed with
//     unallowed key"; at most ten are reported, one per key.
//
// Verifier.Verify returns the Result, whose Err is Argo CD's
// ComparisonError message ("GIT/GPG: Failed verifying ...", the source
// named for a multi-source app), or an error when the criteria cannot be
// applied (two policies, an unknown mode, a source that cannot list
// signatures, a fetch that failed). Listings are remembered per
// repository, revision, depth and key ring, so that a refresh does not
// walk a history again.
package integrity
