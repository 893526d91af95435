package sops

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	gsops "github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	"github.com/getsops/sops/v3/cmd/sops/common"
	"github.com/getsops/sops/v3/cmd/sops/formats"
	"github.com/getsops/sops/v3/config"
	"github.com/getsops/sops/v3/keyservice"
	"github.com/getsops/sops/v3/kms"
	"google.golang.org/grpc"
)

// kmsFile encrypts secretYAML for an AWS KMS key whose wrapped data key is
// a placeholder (no cloud is reachable here) and returns the file and the
// data key.
func kmsFile(t *testing.T) (string, []byte) {
	t.Helper()
	store := common.StoreForFormat(formats.Yaml, config.NewStoresConfig())
	branches, err := store.LoadPlainFile([]byte(secretYAML))
	if err != nil {
		t.Fatal(err)
	}
	key := &kms.MasterKey{Arn: "arn:aws:kms:eu-west-1:111122223333:key/test", EncryptedKey: "d3JhcHBlZC1ieS1rbXM=", CreationDate: time.Now().UTC()}
	tree := gsops.Tree{Branches: branches, Metadata: gsops.Metadata{KeyGroups: []gsops.KeyGroup{{key}}, EncryptedRegex: "^(data|stringData)$", Version: "3.13.3"}}
	dataKey := make([]byte, 32)
	if _, err := rand.Read(dataKey); err != nil {
		t.Fatal(err)
	}
	if err := common.EncryptTree(common.EncryptTreeOpts{Tree: &tree, Cipher: aes.NewCipher(), DataKey: dataKey}); err != nil {
		t.Fatal(err)
	}
	out, err := store.EmitEncryptedFile(tree)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), dataKey
}

// hostKMS stands in for a cloud KMS (none is reachable from the tests): it
// records the key it was asked about and unwraps to the data key.
type hostKMS struct {
	dataKey []byte
	asked   []string
}

func (h *hostKMS) Decrypt(ctx context.Context, req *keyservice.DecryptRequest, _ ...grpc.CallOption) (*keyservice.DecryptResponse, error) {
	if _, ok := ctx.Deadline(); !ok {
		return nil, errors.New("called without a deadline")
	}
	h.asked = append(h.asked, req.GetKey().GetKmsKey().GetArn())
	return &keyservice.DecryptResponse{Plaintext: h.dataKey}, nil
}

func (h *hostKMS) Encrypt(context.Context, *keyservice.EncryptRequest, ...grpc.CallOption) (*keyservice.EncryptResponse, error) {
	return nil, errors.New("not used")
}

// Without HostKMS a KMS-encrypted file is refused and no provider is
// called; with it, the data key is unwrapped by the host's key service
// (SOPS's local one in production, a stand-in here), under a deadline.
func TestKMSOnlyWhenTheHostOptsIn(t *testing.T) {
	enc, dataKey := kmsFile(t)
	id, _ := newIdentity(t)
	refusing := newDecryptor(t, id)
	_, encrypted, err := refusing.Decrypt(context.Background(), "app/secret.yaml", []byte(enc))
	if !errors.Is(err, ErrKMSNotAllowed) || !encrypted || !strings.Contains(err.Error(), "AWS KMS") {
		t.Fatalf("KMS file without HostKMS: %v", err)
	}

	opts := DefaultOptions()
	opts.HostKMS = true
	d, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.host.(keyservice.LocalClient); !ok {
		t.Fatalf("HostKMS does not wire SOPS's local key service: %T", d.host)
	}
	if d.ID() == refusing.ID() || !strings.Contains(d.ID(), "hostkms=true") {
		t.Fatalf("HostKMS is not in the ID: %q", d.ID())
	}
	stand := &hostKMS{dataKey: dataKey}
	d.host = stand
	plain, _, err := d.Decrypt(context.Background(), "app/secret.yaml", []byte(enc))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "KMS file with HostKMS", string(plain), "password: hunter2-plaintext")
	if len(stand.asked) != 1 || stand.asked[0] != "arn:aws:kms:eu-west-1:111122223333:key/test" {
		t.Fatalf("host key service asked %v", stand.asked)
	}
}
