package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/internal/sopsexe"
)

// sopsApp writes an Application whose source folder holds a SOPS-encrypted
// Secret (listed by a kustomization, as KSOPS users list it once the
// generator is gone) and returns the app file.
func sopsApp(t *testing.T, kustomization string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"repo/app/kustomization.yaml": kustomization,
		"repo/app/secret.enc.yaml":    sopsexe.SecretYAML,
		"repo/app/secret-generator.yaml": "apiVersion: viaduct.ai/v1\nkind: ksops\nmetadata:\n  name: secrets\n" +
			"  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: ksops\nfiles:\n- ./secret.enc.yaml\n",
		"app.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: secrets}
spec:
  project: default
  source: {repoURL: "file://` + filepath.Join(dir, "repo") + `", path: app}
  destination: {server: https://kubernetes.default.svc, namespace: ci}
`,
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "app.yaml")
}

// gitopsctl render --sops decrypts a SOPS-encrypted Kustomize resource
// with the age key of --sops-age-key-file through gitops-sops; without
// --sops the render refuses the encrypted file by name; a missing key file
// is a usage error naming it; a KSOPS generator is refused by name with
// what to write instead.
func TestRenderDecryptsWithSops(t *testing.T) {
	bin := sopsexe.Binary(t)
	keys := sopsexe.WriteAgeKeys(t)
	app := sopsApp(t, "resources: [secret.enc.yaml]\n")
	code, out, errOut := runCLI(t, "render", "--offline", "--show-secrets", "--app", app, "--sops", bin, "--sops-age-key-file", keys)
	if code != 0 {
		t.Fatalf("render --sops: exit %d\n%s", code, errOut)
	}
	mustContain(t, "decrypted render", out, "name: db", sopsexe.Plaintext)
	if strings.Contains(out, "ENC[") || strings.Contains(out, "sops:") {
		t.Errorf("the render holds ciphertext:\n%s", out)
	}

	code, out, errOut = runCLI(t, "render", "--offline", "--show-secrets", "--app", app)
	if code == 0 || !strings.Contains(errOut, "app/secret.enc.yaml is SOPS-encrypted") || strings.Contains(out, sopsexe.Plaintext) {
		t.Errorf("render without --sops: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	code, _, errOut = runCLI(t, "render", "--offline", "--app", app, "--sops", bin, "--sops-age-key-file", "/nonexistent/keys.txt")
	if code == 0 || !strings.Contains(errOut, "/nonexistent/keys.txt") {
		t.Errorf("render with a missing key file: exit %d\n%s", code, errOut)
	}
	ksops := sopsApp(t, "generators: [secret-generator.yaml]\n")
	code, _, errOut = runCLI(t, "render", "--offline", "--app", ksops, "--sops", bin, "--sops-age-key-file", keys)
	if code == 0 || !strings.Contains(errOut, "KSOPS generator") || !strings.Contains(errOut, "resources:") {
		t.Errorf("render of a KSOPS generator: exit %d\n%s", code, errOut)
	}
}
