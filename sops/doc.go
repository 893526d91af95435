// Package sops decrypts SOPS-encrypted files at render time, for
// render.Decrypting and gitops.Options.Decryptor.
//
// It is a module of its own (github.com/kubegitops/gitops/sops) because
// SOPS brings the AWS, GCP, Azure, Vault and HuaweiCloud SDKs: the
// library's go.mod stays free of them, and only a host that imports this
// module builds them.
//
// A Decryptor recognises SOPS documents by their metadata (a top-level
// sops key in YAML and JSON, sops_ lines in dotenv, a [sops] section in
// INI) or by ENC[AES256_GCM,...] values, in the format the file's
// extension names as the sops CLI does; any other file is passed through
// untouched. A SOPS document is decrypted with the data key its key groups
// yield, its MAC is checked, and it is emitted in its own format without
// the metadata. So an encrypted Secret in a plain directory, an encrypted
// Kustomize resource (the KSOPS convention, without the KSOPS generator),
// an encrypted secretGenerator source (envs or files) and a Helm value
// file named "secrets://values.enc.yaml" (helm-secrets' convention) all
// render as their plaintext.
//
// Keys: age identities are the only keys held, given in Options.AgeKeys
// and read by ReadAgeKeyFile (age's keys.txt) or AgeKeysFromSecret /
// LoadAgeKeysFromSecret (every "*.agekey" entry of a Secret, Flux's
// convention). The environment is never read for them: SOPS_AGE_KEY,
// SOPS_AGE_KEY_FILE and the user's keys.txt are ignored, because this
// module runs SOPS's decryption with a key service of its own instead of
// the decrypt package's (which loads keys from the environment). Cloud
// KMS, Vault, HuaweiCloud and PGP keys are used only when the host sets
// Options.HostKMS, through SOPS's local key service with the host's own
// credentials, each call bounded by Options.KMSTimeout; without it such a
// file fails with ErrKMSNotAllowed and no provider is called.
//
// Failures are typed and never show plaintext or secret keys: ErrTampered
// (MAC mismatch or a value that fails authentication), ErrNoMatchingKey
// (naming the age recipients the file is for), ErrNoKeys, ErrKMSNotAllowed,
// ErrMalformed. render.Decrypting wraps each in a *render.DecryptError
// naming the file, so the app shows a ComparisonError, nothing is applied,
// and what the cluster holds stays.
//
// ID names the SOPS version, a digest of the public recipients of the
// keys held, and HostKMS: it is part of the render cache key, so adding a
// key re-renders, and no secret enters the key. The render cache keeps the
// output of every render that decrypted something in process memory only
// (render.CacheOptions.Private), never in the shared store: Redis never
// holds plaintext.
//
// Command cmd/gitops-sops is a Decryptor as a program (age keys from files
// or named environment variables), for hosts built from the library's own
// module, which decrypt through it with render/execdecrypt and so link
// none of SOPS's SDKs: gitopsctl --sops and the operator's -sops.
package sops
