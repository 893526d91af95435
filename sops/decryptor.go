package sops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"filippo.io/age"
	gsops "github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/cmd/sops/common"
	"github.com/getsops/sops/v3/cmd/sops/formats"
	"github.com/getsops/sops/v3/config"
	"github.com/getsops/sops/v3/keyservice"

	"github.com/kubegitops/gitops/render"
)

// Version is the SOPS library this module decrypts with; it is part of
// the decryptor's ID.
const Version = "sops/v3.13.3"

// Options configure a Decryptor.
type Options struct {
	// AgeKeys are age identities (AGE-SECRET-KEY-1..., one or more per
	// string, age's keys.txt format), from ReadAgeKeyFile,
	// AgeKeysFromSecret or the host's own store. They are the only age
	// keys used: SOPS_AGE_KEY, SOPS_AGE_KEY_FILE and the user's keys.txt
	// are never read.
	AgeKeys []string
	// HostKMS lets files encrypted for AWS KMS, GCP KMS, Azure Key Vault,
	// HashiCorp Vault, HuaweiCloud KMS or PGP be decrypted through SOPS's
	// own key service, with the credentials the host process has (the
	// cloud SDKs' environment, instance metadata, the GnuPG keyring).
	// Default false: such a file fails with ErrKMSNotAllowed and no
	// provider is called.
	HostKMS bool
	// KMSTimeout bounds each call to a host key provider. Default 15 s.
	KMSTimeout time.Duration
}

// DefaultOptions returns no keys, no host providers and a 15 s timeout.
func DefaultOptions() Options { return Options{KMSTimeout: 15 * time.Second} }

// Decryptor decrypts SOPS documents (YAML, JSON, dotenv, INI and SOPS's
// binary format, chosen by file extension as the sops CLI does) for
// render.Decrypting. It is safe for concurrent use.
type Decryptor struct {
	opts Options
	ids  []age.Identity
	id   string
	host keyservice.KeyServiceClient
}

var _ render.Decryptor = (*Decryptor)(nil)

// New returns a Decryptor with opts. Unparsable keys fail naming their
// position, never their content.
func New(opts Options) (*Decryptor, error) {
	if opts.KMSTimeout <= 0 {
		opts.KMSTimeout = DefaultOptions().KMSTimeout
	}
	ids, recipients, err := parseIdentities(opts.AgeKeys)
	if err != nil {
		return nil, err
	}
	d := &Decryptor{opts: opts, ids: ids}
	if opts.HostKMS {
		d.host = keyservice.NewLocalClient()
	}
	// The ID names the public half of each key: a new key is a new cache
	// key (a render that failed for want of it is retried), and no secret
	// enters the key.
	sum := sha256.Sum256([]byte(strings.Join(recipients, "\n")))
	d.id = fmt.Sprintf("%s age=%s hostkms=%t", Version, hex.EncodeToString(sum[:8]), opts.HostKMS)
	return d, nil
}

// ID implements render.Decryptor.
func (d *Decryptor) ID() string { return d.id }

// Decrypt implements render.Decryptor: a file that is not a SOPS document
// is returned as not encrypted; a SOPS document is decrypted, its MAC
// checked, and emitted in its own format without the sops metadata.
func (d *Decryptor) Decrypt(ctx context.Context, name string, data []byte) ([]byte, bool, error) {
	format := formats.FormatForPath(name)
	if !looksEncrypted(format, data) {
		return nil, false, nil
	}
	store := common.StoreForFormat(format, config.NewStoresConfig())
	tree, err := store.LoadEncryptedFile(data)
	if err != nil {
		if errors.Is(err, gsops.MetadataNotFound) {
			return nil, true, fmt.Errorf("%w: encrypted values but no sops metadata", ErrMalformed)
		}
		return nil, true, fmt.Errorf("%w: cannot load it as %s", ErrMalformed, formatName(format))
	}
	client := &keyClient{ctx: ctx, ids: d.ids, host: d.host, timeout: d.opts.KMSTimeout}
	key, err := tree.Metadata.GetDataKeyWithKeyServices([]keyservice.KeyServiceClient{client}, nil)
	if err != nil {
		return nil, true, d.keyError(&tree.Metadata, client, err)
	}
	cipher := aes.NewCipher()
	mac, err := tree.Decrypt(key, cipher)
	if err != nil {
		return nil, true, fmt.Errorf("%w: a value does not decrypt", ErrTampered)
	}
	stored, err := cipher.Decrypt(tree.Metadata.MessageAuthenticationCode, key, tree.Metadata.LastModified.Format(time.RFC3339))
	if err != nil || stored != mac {
		return nil, true, fmt.Errorf("%w: MAC mismatch", ErrTampered)
	}
	plain, err := store.EmitPlainFile(tree.Branches)
	if err != nil {
		return nil, true, fmt.Errorf("%w: emit %s", ErrMalformed, formatName(format))
	}
	return plain, true, nil
}

// keyError explains why no key opened the data key: which recipients the
// file is for (public keys and KMS kinds, never secrets).
func (d *Decryptor) keyError(md *gsops.Metadata, c *keyClient, cause error) error {
	var ageFor, others []string
	for _, g := range md.KeyGroups {
		for _, k := range g {
			if ak, ok := k.(*sopsage.MasterKey); ok {
				ageFor = append(ageFor, ak.Recipient)
			} else {
				others = append(others, k.TypeToIdentifier())
			}
		}
	}
	sort.Strings(ageFor)
	switch {
	case len(ageFor) == 0 && len(c.refusedKinds()) > 0:
		return fmt.Errorf("%w: encrypted for %s", ErrKMSNotAllowed, strings.Join(c.refusedKinds(), ", "))
	case len(d.ids) == 0 && d.host == nil:
		return fmt.Errorf("%w: the file is for age recipients %s", ErrNoKeys, strings.Join(ageFor, ", "))
	case len(ageFor) > 0:
		return fmt.Errorf("%w: the file is for age recipients %s%s", ErrNoMatchingKey, strings.Join(ageFor, ", "), otherKinds(others))
	}
	return fmt.Errorf("%w: %v", ErrNoMatchingKey, cause)
}

func otherKinds(kinds []string) string {
	if len(kinds) == 0 {
		return ""
	}
	return " and " + strings.Join(kinds, ", ") + " keys"
}

func formatName(f formats.Format) string {
	switch f {
	case formats.Yaml:
		return "YAML"
	case formats.Json:
		return "JSON"
	case formats.Dotenv:
		return "dotenv"
	case formats.Ini:
		return "INI"
	}
	return "SOPS binary (JSON)"
}
