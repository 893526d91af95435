package kustomize

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/rendertest"
)

// A SOPS-encrypted Kustomize resource, or secretGenerator source, with no
// decryptor fails the render naming the file, however kustomize reworded
// the read error; the ciphertext never becomes a Secret.
func TestEncryptedResourceIsRefusedWithoutADecryptor(t *testing.T) {
	cases := map[string]string{
		"resource":  "resources: [secret.enc.yaml]\n",
		"json":      "resources: [secret.enc.json]\n",
		"generator": "secretGenerator:\n- name: db\n  files: [secret.enc.yaml]\n",
	}
	for name, kustomization := range cases {
		snap := rendertest.NewSnapshot(fstest.MapFS{
			"app/kustomization.yaml": {Data: []byte(kustomization)},
			"app/secret.enc.yaml":    {Data: []byte(rendertest.SOPSSecretYAML)},
			"app/secret.enc.json":    {Data: []byte(rendertest.SOPSSecretJSON)},
		})
		objs, err := New(DefaultOptions()).Render(context.Background(), render.Input{FS: snap, Path: "app"})
		var ee *render.EncryptedError
		if !errors.As(err, &ee) || (ee.Path != "app/secret.enc.yaml" && ee.Path != "app/secret.enc.json") {
			t.Errorf("%s: rendered %d objects, err %v; want an *EncryptedError naming the file", name, len(objs), err)
		}
	}
}

// The KSOPS generator Argo CD users commit (generators: naming a file of
// kind ksops, a Kustomize exec plugin) is refused with a *KSOPSError naming
// the generator file and saying what to write instead, in the app's
// kustomization and in one it reaches.
func TestKSOPSGeneratorIsRefusedByName(t *testing.T) {
	const generator = "apiVersion: viaduct.ai/v1\nkind: ksops\nmetadata:\n  name: secrets\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: ksops\nfiles:\n- ./secret.enc.yaml\n"
	for name, files := range map[string]fstest.MapFS{
		"top": {
			"app/kustomization.yaml":    {Data: []byte("generators: [secret-generator.yaml]\n")},
			"app/secret-generator.yaml": {Data: []byte(generator)},
			"app/secret.enc.yaml":       {Data: []byte(rendertest.SOPSSecretYAML)},
		},
		"base": {
			"app/kustomization.yaml":         {Data: []byte("resources: [base]\n")},
			"app/base/kustomization.yaml":    {Data: []byte("generators:\n- ./secret-generator.yaml\n")},
			"app/base/secret-generator.yaml": {Data: []byte(strings.Replace(generator, "kind: ksops", "kind: KSOPS", 1))},
		},
	} {
		objs, err := New(DefaultOptions()).Render(context.Background(), render.Input{FS: rendertest.NewSnapshot(files), Path: "app"})
		var ke *KSOPSError
		if !errors.As(err, &ke) || !strings.HasSuffix(ke.Generator, "secret-generator.yaml") || !strings.Contains(err.Error(), "resources:") {
			t.Errorf("%s: rendered %d objects, err %v; want a *KSOPSError naming the generator and what to write instead", name, len(objs), err)
		}
	}
}
