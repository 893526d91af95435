package execdecrypt_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kubegitops/gitops/internal/sopsexe"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/execdecrypt"
	"github.com/kubegitops/gitops/render/plain"
)

// Through gitops-sops: an encrypted Secret renders as its plaintext, a
// plain file passes untouched, a decryptor without the key fails the
// render naming the file and no secret, and a key file that does not
// exist is refused at New naming it.
func TestDecryptsThroughGitopsSops(t *testing.T) {
	ctx := context.Background()
	bin := sopsexe.Binary(t)
	d, err := execdecrypt.New(ctx, execdecrypt.Options{Command: bin, Args: []string{"-age-key-file", sopsexe.WriteAgeKeys(t)}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.ID(), "exec sops/") {
		t.Errorf("ID %q, want the program's", d.ID())
	}
	out, enc, err := d.Decrypt(ctx, "app/secret.enc.yaml", []byte(sopsexe.SecretYAML))
	if err != nil || !enc || !strings.Contains(string(out), sopsexe.Plaintext) || strings.Contains(string(out), "sops:") {
		t.Fatalf("decrypt: %q %v %v", out, enc, err)
	}
	if _, enc, err := d.Decrypt(ctx, "app/cm.yaml", []byte("kind: ConfigMap\nmetadata: {name: sops-settings}\n")); enc || err != nil {
		t.Errorf("a plain file that says sops: encrypted %v, err %v", enc, err)
	}
	objs, err := render.Decrypting(plain.New(plain.DefaultOptions()), d).Render(ctx, render.Input{
		FS: fstest.MapFS{"app/secret.enc.yaml": {Data: []byte(sopsexe.SecretYAML)}}, Path: "app", Tool: render.KindPlain})
	if err != nil || len(objs) != 1 {
		t.Fatalf("render: %d objects, %v", len(objs), err)
	}
	if pw, _, _ := unstructuredString(objs[0].Object, "stringData", "password"); pw != sopsexe.Plaintext {
		t.Errorf("rendered password %q", pw)
	}

	nokey, err := execdecrypt.New(ctx, execdecrypt.Options{Command: bin})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = nokey.Decrypt(ctx, "app/secret.enc.yaml", []byte(sopsexe.SecretYAML))
	var pe *execdecrypt.ProgramError
	if !errors.As(err, &pe) || pe.File != "app/secret.enc.yaml" || !strings.Contains(err.Error(), "no SOPS keys") || strings.Contains(err.Error(), "AGE-SECRET") {
		t.Errorf("no key: %v", err)
	}
	_, err = execdecrypt.New(ctx, execdecrypt.Options{Command: bin, Args: []string{"-age-key-file", "/nonexistent/keys.txt"}})
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "/nonexistent/keys.txt") {
		t.Errorf("missing key file: %v", err)
	}
	if _, err := execdecrypt.New(ctx, execdecrypt.Options{Command: "/nonexistent/gitops-sops"}); !errors.As(err, &pe) {
		t.Errorf("missing program: %v", err)
	}
}

func unstructuredString(obj map[string]any, fields ...string) (string, bool, error) {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false, nil
		}
		cur = m[f]
	}
	s, ok := cur.(string)
	return s, ok, nil
}
