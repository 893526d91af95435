package sops

import "errors"

// Sentinel errors wrapped by the decryptor's failures (which
// render.Decrypting wraps in a *render.DecryptError naming the file).
var (
	// ErrTampered: the file's MAC does not match its content, or an
	// encrypted value fails authentication: the file was changed after
	// it was encrypted, or not by SOPS.
	ErrTampered = errors.New("SOPS file fails its integrity check (tampered MAC or value)")
	// ErrNoMatchingKey: none of the decryptor's keys opens the file's data
	// key (the file is encrypted for other recipients).
	ErrNoMatchingKey = errors.New("no configured key decrypts this SOPS file")
	// ErrNoKeys: the decryptor holds no age key and no host key provider
	// is allowed, so no file can be decrypted.
	ErrNoKeys = errors.New("no SOPS keys configured")
	// ErrKMSNotAllowed: the file can be opened only by a cloud KMS, Vault
	// or PGP key, and the host has not opted in with Options.HostKMS.
	ErrKMSNotAllowed = errors.New("SOPS file needs a KMS/PGP key provider the host has not enabled (Options.HostKMS)")
	// ErrMalformed: the file looks encrypted (SOPS metadata or ENC[...]
	// values) but cannot be read as a SOPS document.
	ErrMalformed = errors.New("malformed SOPS file")
	// ErrKeySource: an age key file or Secret could not be read or parsed.
	ErrKeySource = errors.New("unreadable SOPS key source")
)
