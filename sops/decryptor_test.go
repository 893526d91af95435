package sops

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestDecryptsYAMLJSONAndDotenv(t *testing.T) {
	id, rcp := newIdentity(t)
	d := newDecryptor(t, id)
	cases := []struct{ name, plain, regex, want string }{
		{"secret.yaml", secretYAML, "^(data|stringData)$", "password: hunter2-plaintext"},
		{"values.json", `{"db": {"password": "hunter2-plaintext"}}`, "", `"password": "hunter2-plaintext"`},
		{"creds.env", "PASSWORD=hunter2-plaintext\nUSER=app\n", "", "PASSWORD=hunter2-plaintext"},
	}
	for _, c := range cases {
		enc := encryptFile(t, c.name, c.plain, c.regex, rcp)
		if strings.Contains(enc, "hunter2") {
			t.Fatalf("%s: the fixture is not encrypted:\n%s", c.name, enc)
		}
		plain, encrypted, err := d.Decrypt(context.Background(), "app/"+c.name, []byte(enc))
		if err != nil || !encrypted {
			t.Fatalf("%s: %v %v", c.name, encrypted, err)
		}
		mustContain(t, c.name, string(plain), c.want)
		if strings.Contains(string(plain), "sops") {
			t.Fatalf("%s: the sops metadata is left in the plaintext:\n%s", c.name, plain)
		}
	}
	// A file that is not SOPS-encrypted is passed through untouched, even
	// one that mentions sops.
	for name, data := range map[string]string{"cm.yaml": "kind: ConfigMap\ndata: {tool: sops}\n", "a.json": `{"sops": 1`, "x.env": "A=sops\n"} {
		if out, encrypted, err := d.Decrypt(context.Background(), name, []byte(data)); err != nil || encrypted || out != nil {
			t.Fatalf("%s: plain file: %q %v %v", name, out, encrypted, err)
		}
	}
}

func TestBadFilesFailWithTypedErrors(t *testing.T) {
	id, rcp := newIdentity(t)
	other, otherRcp := newIdentity(t)
	d := newDecryptor(t, id)
	enc := encryptFile(t, "secret.yaml", secretYAML, "^(data|stringData)$", rcp)

	macLine := regexpLine(t, enc, "    mac: ")
	tamperedMAC := strings.Replace(enc, macLine, macLine[:len(macLine)-12]+"AAAAAAAAAAA]", 1)
	// A value swapped for another valid ciphertext of the same file keeps
	// decrypting but breaks the MAC.
	other2 := encryptFile(t, "secret.yaml", strings.Replace(secretYAML, "hunter2-plaintext", "attacker-value", 1), "^(data|stringData)$", rcp)
	tamperedValue := strings.Replace(enc, regexpLine(t, enc, "    password: "), regexpLine(t, other2, "    password: "), 1)
	noMeta := enc[:strings.Index(enc, "sops:")]

	cases := []struct {
		what string
		d    *Decryptor
		data string
		want error
	}{
		{"tampered MAC", d, tamperedMAC, ErrTampered},
		{"swapped value", d, tamperedValue, ErrTampered},
		{"unknown key", newDecryptor(t, other), enc, ErrNoMatchingKey},
		{"no keys", newDecryptor(t), enc, ErrNoKeys},
		{"metadata stripped", d, noMeta, ErrMalformed},
	}
	for _, c := range cases {
		_, encrypted, err := c.d.Decrypt(context.Background(), "app/secret.yaml", []byte(c.data))
		if !errors.Is(err, c.want) || !encrypted {
			t.Fatalf("%s: got %v (encrypted %v), want %v", c.what, err, encrypted, c.want)
		}
		if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "AGE-SECRET-KEY") {
			t.Fatalf("%s: the error reveals a secret: %v", c.what, err)
		}
	}
	// The unknown-key error names who the file is for (public keys).
	_, _, err := newDecryptor(t, other).Decrypt(context.Background(), "secret.yaml", []byte(enc))
	mustContain(t, "unknown key", err.Error(), rcp)
	if strings.Contains(err.Error(), otherRcp) {
		t.Fatalf("the error names the decryptor's own key: %v", err)
	}
}

func TestIDNamesPublicKeysOnly(t *testing.T) {
	id1, _ := newIdentity(t)
	id2, _ := newIdentity(t)
	a, b, a2 := newDecryptor(t, id1), newDecryptor(t, id2), newDecryptor(t, id1)
	if a.ID() == b.ID() || a.ID() != a2.ID() {
		t.Fatalf("IDs: %q %q %q", a.ID(), b.ID(), a2.ID())
	}
	if strings.Contains(a.ID(), "AGE-SECRET") || strings.Contains(a.ID(), id1[15:30]) {
		t.Fatalf("the ID holds the key: %q", a.ID())
	}
	if _, err := New(Options{AgeKeys: []string{"AGE-SECRET-KEY-1NOTAKEY"}}); !errors.Is(err, ErrKeySource) || strings.Contains(err.Error(), "NOTAKEY") {
		t.Fatalf("bad key: %v", err)
	}
}

func TestAgeKeysFromSecretAndFile(t *testing.T) {
	id, rcp := newIdentity(t)
	s := &corev1.Secret{Data: map[string][]byte{"identity.agekey": []byte("# created by a test\n" + id + "\n"), "other": []byte("x")}}
	s.Namespace, s.Name = "flux-system", "sops-age"
	keys, err := AgeKeysFromSecret(s)
	if err != nil {
		t.Fatal(err)
	}
	enc := encryptFile(t, "secret.yaml", secretYAML, "^(data|stringData)$", rcp)
	if _, _, err := newDecryptor(t, keys...).Decrypt(context.Background(), "secret.yaml", []byte(enc)); err != nil {
		t.Fatal(err)
	}
	delete(s.Data, "identity.agekey")
	if _, err := AgeKeysFromSecret(s); !errors.Is(err, ErrKeySource) || !strings.Contains(err.Error(), "flux-system/sops-age") {
		t.Fatalf("a Secret without keys: %v", err)
	}
	path := t.TempDir() + "/keys.txt"
	writeFile(t, path, id+"\n")
	if keys, err := ReadAgeKeyFile(path); err != nil || len(keys) != 1 {
		t.Fatalf("key file: %v %v", keys, err)
	}
	if _, err := ReadAgeKeyFile(path + ".missing"); !errors.Is(err, ErrKeySource) || !strings.Contains(err.Error(), "keys.txt.missing") {
		t.Fatalf("missing key file: %v", err)
	}
}

// The environment's SOPS variables are never used: a file the
// environment's key would open fails without a configured key.
func TestEnvironmentKeysAreIgnored(t *testing.T) {
	id, rcp := newIdentity(t)
	t.Setenv("SOPS_AGE_KEY", id)
	enc := encryptFile(t, "secret.yaml", secretYAML, "^(data|stringData)$", rcp)
	if _, _, err := newDecryptor(t).Decrypt(context.Background(), "secret.yaml", []byte(enc)); !errors.Is(err, ErrNoKeys) {
		t.Fatalf("SOPS_AGE_KEY was used: %v", err)
	}
}
