package render_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/rendertest"
)

func TestIsSOPSKnowsSOPSDocumentsOnly(t *testing.T) {
	cases := []struct {
		name string
		data string
		want bool
	}{
		{"sops yaml", rendertest.SOPSSecretYAML, true},
		{"sops json", rendertest.SOPSSecretJSON, true},
		{"sops values", rendertest.SOPSValuesYAML, true},
		{"sops second document", "kind: ConfigMap\n---\n" + rendertest.SOPSSecretYAML, true},
		{"plain secret", "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData: {mac: x, lastmodified: y}\n", false},
		{"sops key not metadata", "sops: enabled\nmac: address\n", false},
		{"nested sops mapping", "data:\n  sops:\n    mac: x\n", false},
		{"not yaml", "sops mac {{ .Values }}: [\n", false},
		{"empty", "", false},
	}
	for _, c := range cases {
		if got := render.IsSOPS([]byte(c.data)); got != c.want {
			t.Errorf("%s: IsSOPS = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRefuseEncryptedNamesTheFileAndTheOption(t *testing.T) {
	err := render.RefuseEncrypted("app/secret.yaml", []byte(rendertest.SOPSSecretYAML))
	var ee *render.EncryptedError
	if !errors.As(err, &ee) || ee.Path != "app/secret.yaml" || !errors.Is(err, render.ErrEncrypted) {
		t.Fatalf("err = %v, want an *EncryptedError for app/secret.yaml", err)
	}
	for _, want := range []string{"app/secret.yaml", "gitops.Options.Decryptor", "render.Decrypting"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "ENC[") {
		t.Errorf("message quotes the ciphertext: %q", err)
	}
	if err := render.RefuseEncrypted("cm.yaml", []byte("kind: ConfigMap\n")); err != nil {
		t.Errorf("plain file refused: %v", err)
	}
}
