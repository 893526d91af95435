package sops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"filippo.io/age"
	"filippo.io/age/armor"
	"github.com/getsops/sops/v3/keyservice"
	"google.golang.org/grpc"
)

// keyClient is the key service of one decryption: age keys from the
// decryptor's identities only (never from the environment, unlike SOPS's
// local key service), and every other kind of key through SOPS's local key
// service only when the host allowed it. It records what it refused, so
// that the error can say why no key worked.
type keyClient struct {
	ctx     context.Context
	ids     []age.Identity
	host    keyservice.KeyServiceClient // nil unless Options.HostKMS
	timeout time.Duration

	mu      sync.Mutex
	refused []string // key types refused for want of HostKMS
}

var _ keyservice.KeyServiceClient = (*keyClient)(nil)

// Decrypt implements keyservice.KeyServiceClient.
func (c *keyClient) Decrypt(_ context.Context, req *keyservice.DecryptRequest, _ ...grpc.CallOption) (*keyservice.DecryptResponse, error) {
	if _, ok := req.GetKey().GetKeyType().(*keyservice.Key_AgeKey); ok {
		if len(c.ids) == 0 {
			return nil, ErrNoKeys
		}
		r, err := age.Decrypt(armor.NewReader(bytes.NewReader(req.GetCiphertext())), c.ids...)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNoMatchingKey, err)
		}
		plain, err := io.ReadAll(io.LimitReader(r, 1<<20))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrTampered, err)
		}
		return &keyservice.DecryptResponse{Plaintext: plain}, nil
	}
	kind := keyKind(req.GetKey())
	if c.host == nil {
		c.mu.Lock()
		c.refused = append(c.refused, kind)
		c.mu.Unlock()
		return nil, fmt.Errorf("%w: %s key", ErrKMSNotAllowed, kind)
	}
	// SOPS calls its key services without a deadline; bound each call.
	ctx, cancel := context.WithTimeout(c.ctx, c.timeout)
	defer cancel()
	type result struct {
		rsp *keyservice.DecryptResponse
		err error
	}
	done := make(chan result, 1)
	go func() {
		rsp, err := c.host.Decrypt(ctx, req)
		done <- result{rsp, err}
	}()
	select {
	case res := <-done:
		return res.rsp, res.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%s key: %w", kind, ctx.Err())
	}
}

// Encrypt implements keyservice.KeyServiceClient; the decryptor never
// encrypts.
func (c *keyClient) Encrypt(context.Context, *keyservice.EncryptRequest, ...grpc.CallOption) (*keyservice.EncryptResponse, error) {
	return nil, errors.New("the render decryptor does not encrypt")
}

func (c *keyClient) refusedKinds() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.refused...)
}

// keyKind names a SOPS key type for errors (no key material).
func keyKind(k *keyservice.Key) string {
	switch k.GetKeyType().(type) {
	case *keyservice.Key_KmsKey:
		return "AWS KMS"
	case *keyservice.Key_GcpKmsKey:
		return "GCP KMS"
	case *keyservice.Key_AzureKeyvaultKey:
		return "Azure Key Vault"
	case *keyservice.Key_VaultKey:
		return "HashiCorp Vault"
	case *keyservice.Key_PgpKey:
		return "PGP"
	case *keyservice.Key_HckmsKey:
		return "HuaweiCloud KMS"
	case *keyservice.Key_AgeKey:
		return "age"
	}
	return "unknown"
}
